from __future__ import annotations

from django.apps import AppConfig


class GraderConfig(AppConfig):
    name = "grader"
    verbose_name = "Grading"
