from __future__ import annotations

from django.urls import path

from . import views
from .endpoints import api

urlpatterns = [
    path("tokens/", views.token_list, name="api-tokens"),
    path("tokens/<int:pk>/revoke", views.token_revoke, name="api-token-revoke"),
    path("v1/", api.urls),
]
