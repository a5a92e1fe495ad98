"""Grading's metrics: a graded job counted, and what the endpoint reads at scrape time.

``count_graded`` counts a finished Run or Submit into ``core.metrics``.
Queue depth and jobs in flight are states, read fresh on each scrape from the broker (each queue's length)
and the database (claimed jobs queued or running), each within a bounded
time: a sick Redis costs a scrape at most ``_REDIS_TIMEOUT_S`` and shows
as a missing queue, never as a hung endpoint.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import redis
from django.conf import settings
from django.db.models import Count, Min
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from core.metrics import GRADING_SECONDS, INFRA_ERRORS, JOBS, QUEUE_WAIT_SECONDS, SANDBOX_STARTS

from .constants import QUEUE_GPU, QUEUE_MAINTENANCE, QUEUE_RUN, QUEUE_SUBMIT, Outcome, Status
from .lifecycle import job_types
from .models import Submission

log = logging.getLogger(__name__)

QUEUES = (QUEUE_RUN, QUEUE_SUBMIT, QUEUE_GPU, QUEUE_MAINTENANCE)
_REDIS_TIMEOUT_S = 0.5


def count_graded(submission: Submission, outcome: str, error_code: str, timings: dict[str, Any]) -> None:
    """Count a Run or Submit that was just finished (its claim held): outcome, times, how its container started."""
    kind = str(submission.kind)
    JOBS.labels(kind, outcome).inc()
    if outcome == Outcome.INFRA_ERROR:
        INFRA_ERRORS.labels(error_code or "unknown").inc()
    if submission.started_at is not None:
        GRADING_SECONDS.labels(kind).observe(max(0.0, (timezone.now() - submission.started_at).total_seconds()))
        QUEUE_WAIT_SECONDS.labels(kind).observe(max(0.0, (submission.started_at - submission.enqueued_at).total_seconds()))
    if "warm" in timings:
        SANDBOX_STARTS.labels("warm" if timings["warm"] else "cold").inc()


def queue_depths() -> dict[str, int]:
    """Messages waiting in each Celery queue (the Redis list named after it); {} when Redis does not answer."""
    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=_REDIS_TIMEOUT_S, socket_connect_timeout=_REDIS_TIMEOUT_S)
    try:
        with client.pipeline(transaction=False) as pipe:
            for queue in QUEUES:
                pipe.llen(queue)
            lengths = pipe.execute()
    except (redis.RedisError, OSError) as exc:
        log.warning("metrics: could not read the queue lengths: %s", exc)
        return {}
    finally:
        client.close()
    return {queue: int(length) for queue, length in zip(QUEUES, lengths, strict=True)}


class ScrapeTimeCollector(Collector):
    """Queue depth per queue, jobs in flight per job type and status, and the oldest queued job's age."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        depth = GaugeMetricFamily("dojo_queue_depth", "Messages waiting in each Celery queue, read from Redis at scrape time.", labels=["queue"])
        for queue, length in queue_depths().items():
            depth.add_metric([queue], length)
        yield depth
        in_flight = GaugeMetricFamily("dojo_jobs_in_flight", "Claimed jobs (submissions, rejudges, Checks, score posts) queued or running, from the database.", labels=["job", "status"])
        oldest = GaugeMetricFamily("dojo_oldest_queued_seconds", "Age of the oldest queued job of each type (0 when none waits).", labels=["job"])
        now = timezone.now()
        for job_type in job_types():
            rows = job_type.rows().filter(status__in=[Status.QUEUED, Status.RUNNING])
            counts = dict(rows.order_by().values_list("status").annotate(count=Count("pk")).values_list("status", "count"))
            for status in (Status.QUEUED, Status.RUNNING):
                in_flight.add_metric([job_type.label, str(status)], counts.get(status, 0))
            first = rows.filter(status=Status.QUEUED).aggregate(first=Min("enqueued_at"))["first"]
            oldest.add_metric([job_type.label], max(0.0, (now - first).total_seconds()) if first else 0.0)
        yield in_flight
        yield oldest
