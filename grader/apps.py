from __future__ import annotations

from django.apps import AppConfig


class GraderConfig(AppConfig):
    name = "grader"
    verbose_name = "Grading"

    def ready(self) -> None:
        from . import checks, tallies, worker_hooks  # noqa: F401  (registers the system checks, connects the Celery worker hooks)

        tallies.connect_deletions()
