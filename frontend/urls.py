from __future__ import annotations

from django.urls import path

from . import metrics, views

urlpatterns = [
    path("", views.catalog, name="catalog"),
    path("healthz", views.healthz, name="healthz"),
    path("metrics", metrics.metrics, name="metrics"),
    path("signup/", views.signup, name="signup"),
    path("notifications/", views.notification_list, name="notifications"),
    path("accounts/board-name/", views.board_name, name="board-name"),
    path("tracks/<slug:slug>/", views.track_detail, name="track"),
    path("modules/<slug:slug>/", views.module_detail, name="module"),
    path("rungs/<slug:slug>/", views.rung_workspace, name="rung"),
    path("rungs/<slug:slug>/reference", views.rung_reference, name="rung-reference"),
    path("rungs/<slug:slug>/draft", views.rung_draft, name="rung-draft"),
    path("rungs/<slug:slug>/history", views.rung_history, name="rung-history"),
    path("rungs/<slug:slug>/<str:kind>", views.submission_create, name="submission-create"),
    path("submissions/<int:pk>/state", views.submission_state, name="submission-state"),
    path("submissions/<int:pk>/cancel", views.submission_cancel, name="submission-cancel"),
    path("events/<slug:channel>", views.submission_events, name="submission-events"),  # token_urlsafe: a slug
]
