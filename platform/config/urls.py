"""URL configuration: the apps' URLs, the admin and the auth views."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("mentor/", include("mentor.urls")),
    path("aids/", include("aids.urls")),
    path("author/", include("authoring.urls")),
    path("lti/", include("lti.urls")),
    path("", include("frontend.urls")),
]
