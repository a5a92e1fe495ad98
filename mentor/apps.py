from __future__ import annotations

from django.apps import AppConfig


class MentorConfig(AppConfig):
    name = "mentor"
    verbose_name = "Ask the mentor"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers system checks)
