from __future__ import annotations

from django.apps import AppConfig


class AidsConfig(AppConfig):
    """Learning aids beside the workspace: hints revealed one at a time, and problem reports."""

    name = "aids"
    verbose_name = "Learning aids"
