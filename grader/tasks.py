"""Celery tasks: thin wrappers that take ids and call one service.

Tasks are leaves: nothing imports this module; services enqueue by task
name (``grader.lifecycle.enqueue``).
"""

from __future__ import annotations

import logging

from celery import shared_task
from celery.app.task import Task
from django.conf import settings

from core.logs import bind_ids

from . import lifecycle, rejudge, services
from .exceptions import RetryLater

log = logging.getLogger(__name__)


@shared_task(bind=True, name="grader.grade_submission_task", max_retries=None, acks_late=True)
def grade_submission_task(self: Task, submission_id: int) -> None:  # type: ignore[type-arg]
    bind_ids(submission_id=submission_id)
    try:
        services.grade_submission(submission_id, worker=str(self.request.hostname or ""))
    except RetryLater as exc:
        # Back onto the queue it came from (run, submit or gpu).
        queue = (self.request.delivery_info or {}).get("routing_key") or "run"
        raise self.retry(countdown=exc.delay_s, queue=queue) from exc


@shared_task(bind=True, name="grader.rejudge_submission_task", acks_late=True)
def rejudge_submission_task(self: Task, result_id: int) -> None:  # type: ignore[type-arg]
    rejudge.rejudge_one(result_id, worker=str(self.request.hostname or ""))


@shared_task(name="grader.ping_task", ignore_result=False)
def ping_task() -> str:
    """Answers once the worker has started: proves it imports and consumes."""
    return "pong"


@shared_task(name="grader.sweep_stuck_submissions_task")
def sweep_stuck_submissions_task() -> None:
    """The periodic reaper of every type of claimed job, then stale containers."""
    from sandbox.runner import remove_stale_containers

    lifecycle.reap()
    try:
        remove_stale_containers(max_age_s=settings.GRADER_HARD_TIME_LIMIT_S)
    except Exception as exc:  # noqa: BLE001 - Docker being down is the sweeper's least concern
        log.warning("could not clean up sandbox containers: %s", exc)
