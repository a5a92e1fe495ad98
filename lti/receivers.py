"""Grade passback listens to grading: grader announces a passing Submit, this schedules the scores."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from grader.signals import submit_passed

from .passback import schedule_score_posts


@receiver(submit_passed, dispatch_uid="lti.schedule_score_posts")
def _schedule_score_posts(sender: Any, submission_id: int, **kwargs: Any) -> None:
    schedule_score_posts(submission_id)
