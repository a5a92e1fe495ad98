from __future__ import annotations

from django.urls import path

from . import views

app_name = "aids"

urlpatterns = [
    path("rungs/<slug:slug>/hints/reveal", views.reveal_hint, name="reveal-hint"),
    path("rungs/<slug:slug>/reports", views.my_reports, name="my-reports"),
    path("rungs/<slug:slug>/reports/new", views.file_report, name="file-report"),
]
