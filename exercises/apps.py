from __future__ import annotations

from django.apps import AppConfig


class ExercisesConfig(AppConfig):
    name = "exercises"
    verbose_name = "Exercise catalog"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers system checks)
