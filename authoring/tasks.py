"""Celery tasks of authoring: thin wrappers that take ids and call one service.

A leaf: services enqueue these by name (``grader.lifecycle.enqueue``).
"""

from __future__ import annotations

from celery import shared_task
from celery.app.task import Task
from django.conf import settings

from . import services


@shared_task(
    bind=True, name="authoring.check_draft_task", acks_late=True,
    soft_time_limit=settings.AUTHORING_CHECK_SOFT_TIME_LIMIT_S, time_limit=settings.AUTHORING_CHECK_HARD_TIME_LIMIT_S,
)
def check_draft_task(self: Task, check_id: int) -> None:  # type: ignore[type-arg]
    services.run_check(check_id, worker=str(self.request.hostname or ""))
