from __future__ import annotations

from django.apps import AppConfig


class AuthoringConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "authoring"
    verbose_name = "Authoring"

    def ready(self) -> None:
        from grader import lifecycle

        from .services import CHECKS

        # The reaper and a restarted worker's recovery cover Checks too.
        lifecycle.register(CHECKS)
