"""URL configuration: the apps' URLs, the admin and the auth views."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from frontend.views import password_change

urlpatterns = [
    path("admin/", admin.site.urls),
    # Before Django's own: counted by django-axes, and it ends the other sessions.
    path("accounts/password_change/", password_change, name="password_change"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("mentor/", include("mentor.urls")),
    path("aids/", include("aids.urls")),
    path("author/", include("authoring.urls")),
    path("lti/", include("lti.urls")),
    path("courses/", include("courses.urls")),
    path("api/", include("api.urls")),
    path("", include("frontend.urls")),
]
