"""Celery tasks of courses: thin wrappers that take ids and call one service.

A leaf: services enqueue these by name (``grader.lifecycle.enqueue``).
"""

from __future__ import annotations

from celery import shared_task

from . import similarity


@shared_task(
    name=similarity.TASK_NAME, acks_late=True,
    soft_time_limit=similarity.SOFT_TIME_LIMIT_S, time_limit=similarity.HARD_TIME_LIMIT_S,
)
def build_similarity_report_task(report_id: int) -> None:
    similarity.build_similarity_report(report_id)
