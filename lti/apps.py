from __future__ import annotations

from django.apps import AppConfig


class LtiConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "lti"
    verbose_name = "LTI 1.3 courses"

    def ready(self) -> None:
        from grader import lifecycle

        from . import receivers  # noqa: F401  (connects grade passback to grader.signals.submit_passed)
        from .passback import SCORE_POSTS

        # The reaper and a restarted worker's recovery cover score posts too.
        lifecycle.register(SCORE_POSTS)
