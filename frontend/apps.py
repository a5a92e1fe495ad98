from __future__ import annotations

from django.apps import AppConfig


class FrontendConfig(AppConfig):
    name = "frontend"
    verbose_name = "Learner pages"

    def ready(self) -> None:
        from . import sessions  # noqa: F401 - connects the login and logout receivers

