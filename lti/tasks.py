"""Celery tasks of the LTI tool: leaves, enqueued by name (``lti.post_score_task``)."""

from __future__ import annotations

from celery import shared_task
from celery.app.task import Task

from grader.exceptions import RetryLater

from . import passback
from .constants import QUEUE_SCORES


@shared_task(bind=True, name="lti.post_score_task", max_retries=None, acks_late=True)
def post_score_task(self: Task, score_post_id: int) -> None:  # type: ignore[type-arg]
    try:
        passback.post_score(score_post_id, worker=str(self.request.hostname or ""))
    except RetryLater as exc:
        raise self.retry(countdown=exc.delay_s, queue=QUEUE_SCORES) from exc
