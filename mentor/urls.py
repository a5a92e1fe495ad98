from __future__ import annotations

from django.urls import path

from . import views

app_name = "mentor"

urlpatterns = [
    path("ask", views.ask, name="ask"),
    path("modules/<slug:slug>/questions", views.module_questions, name="module-questions"),
]
