from __future__ import annotations

from django.urls import path

from . import views

app_name = "authoring"

urlpatterns = [
    path("", views.home, name="home"),
    path("preview", views.markdown_preview, name="preview"),
    path("import", views.catalog_import, name="import"),
    path("operations/", views.operations_view, name="operations"),
    path("rejudges/<int:pk>/", views.rejudge_detail, name="rejudge"),
    path("modules/new", views.module_create, name="module-create"),
    path("modules/<slug:slug>/", views.module_edit, name="module"),
    path("modules/<slug:slug>/export.zip", views.module_export, name="module-export"),
    path("modules/<slug:slug>/progress.csv", views.module_progress_csv, name="module-csv"),
    path("modules/<slug:slug>/dashboard", views.module_dashboard, name="module-dashboard"),
    path("modules/<slug:slug>/roles", views.module_roles, name="module-roles"),
    path("modules/<slug:slug>/rungs/new", views.rung_create, name="rung-create"),
    path("modules/<slug:slug>/rungs/<slug:rung>/", views.rung_edit, name="rung"),
    path("modules/<slug:slug>/rungs/<slug:rung>/check", views.rung_check, name="rung-check"),
    path("modules/<slug:slug>/rungs/<slug:rung>/checks/<int:pk>", views.check_state, name="check-state"),
    path("modules/<slug:slug>/rungs/<slug:rung>/publish", views.rung_publish, name="rung-publish"),
    path("modules/<slug:slug>/rungs/<slug:rung>/discard", views.rung_discard, name="rung-discard"),
    path("modules/<slug:slug>/rungs/<slug:rung>/dashboard", views.rung_dashboard, name="rung-dashboard"),
    path("modules/<slug:slug>/reports/", views.report_queue, name="reports"),
    path("modules/<slug:slug>/reports/<int:pk>/", views.report_detail, name="report"),
]
