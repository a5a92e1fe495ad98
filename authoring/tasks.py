"""Celery tasks of authoring: thin wrappers that take ids and call one service."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from . import rejudge, services

# A Check grades the reference, the starter and every wrong solution (two
# jobs each, two at a time): give it most of the broker's visibility timeout,
# never more, or the broker would hand a running Check to a second worker.
CHECK_HARD_LIMIT_S = settings.BROKER_VISIBILITY_TIMEOUT_S - 30
CHECK_SOFT_LIMIT_S = CHECK_HARD_LIMIT_S - 30


@shared_task(name="authoring.check_draft_task", acks_late=True, soft_time_limit=CHECK_SOFT_LIMIT_S, time_limit=CHECK_HARD_LIMIT_S)
def check_draft_task(check_id: int) -> None:
    services.run_check(check_id)


@shared_task(name="authoring.rejudge_submission_task", acks_late=True)
def rejudge_submission_task(result_id: int) -> None:
    rejudge.rejudge_one(result_id)
