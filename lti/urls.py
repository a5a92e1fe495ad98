from __future__ import annotations

from django.urls import path

from . import views

app_name = "lti"

urlpatterns = [
    path("jwks.json", views.jwks, name="jwks"),
    path("login/<uuid:registration_uuid>/", views.oidc_login, name="login"),
    path("launch/", views.launch, name="launch"),
    path("deep-link/", views.deep_link, name="deep-link"),
    path("modules/<slug:slug>/roster", views.module_roster, name="module-roster"),
    path("courses/<slug:slug>/roster", views.course_roster, name="course-roster"),
]
