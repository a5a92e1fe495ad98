"""The operations view: what is waiting, what runs, who works, what broke.

The database is the truth about jobs; Redis list lengths show what the
broker holds (they differ when a message is lost, which the sweeper fixes);
a ping shows which workers answer. Every probe is bounded and never raises.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import redis
from django.conf import settings
from django.db.models import Count
from django.utils import timezone

from grader.constants import QUEUE_GPU, QUEUE_RUN, QUEUE_SUBMIT, Outcome, Status
from grader.lifecycle import queue_named
from grader.models import RejudgeResult, Submission

from .models import RungCheck

log = logging.getLogger(__name__)

QUEUES = (QUEUE_RUN, QUEUE_SUBMIT, QUEUE_GPU)
_PROBE_TIMEOUT_S = 1.0


@dataclass
class QueueRow:
    name: str
    waiting_db: int = 0
    running_db: int = 0
    broker_length: int | None = None


@dataclass
class Snapshot:
    queues: list[QueueRow] = field(default_factory=list)
    broker_error: str = ""
    workers: list[str] = field(default_factory=list)
    workers_error: str = ""
    oldest_waiting: Submission | None = None
    oldest_wait_s: float | None = None
    running: list[Submission] = field(default_factory=list)
    infra_errors: list[Submission] = field(default_factory=list)
    infra_by_code: list[tuple[str, int]] = field(default_factory=list)
    checks_waiting: int = 0
    checks_running: int = 0
    rejudges_waiting: int = 0
    taken_at: Any = None


def _broker_url() -> str:
    from config.celery import app

    return str(app.conf.broker_url or settings.CELERY_BROKER_URL)


def broker_lengths(queues: tuple[str, ...] = QUEUES) -> dict[str, int]:
    """``LLEN`` of each queue's list in the Redis broker (Celery's key is the queue name)."""
    client = redis.Redis.from_url(_broker_url(), socket_timeout=_PROBE_TIMEOUT_S, socket_connect_timeout=_PROBE_TIMEOUT_S)
    try:
        return {name: int(client.llen(name)) for name in queues}
    finally:
        client.close()


def alive_workers() -> list[str]:
    from config.celery import app

    replies = app.control.inspect(timeout=_PROBE_TIMEOUT_S).ping() or {}
    return sorted(replies)


def snapshot() -> Snapshot:
    now = timezone.now()
    snap = Snapshot(taken_at=now)
    rows = {name: QueueRow(name) for name in QUEUES}
    active = (Submission.objects.filter(status__in=[Status.QUEUED, Status.RUNNING])
              .values("status", "kind", "rung_version__gpu").annotate(n=Count("pk")))
    for row in active:
        queue = rows[queue_named(row["kind"], row["rung_version__gpu"])]
        if row["status"] == Status.QUEUED:
            queue.waiting_db += row["n"]
        else:
            queue.running_db += row["n"]
    try:
        for name, length in broker_lengths().items():
            rows[name].broker_length = length
    except Exception as exc:  # noqa: BLE001 - the page must render with Redis down
        snap.broker_error = f"{type(exc).__name__}: {exc}"[:300]
    try:
        # NOTE: with the broker unreachable a ping retries its connection for
        # a long time: ask only when the broker just answered.
        snap.workers = alive_workers() if not snap.broker_error else []
        if snap.broker_error:
            snap.workers_error = "not asked: the broker is unreachable"
    except Exception as exc:  # noqa: BLE001 - the page must render with the broker down
        snap.workers_error = f"{type(exc).__name__}: {exc}"[:300]
    snap.queues = list(rows.values())
    snap.oldest_waiting = Submission.objects.filter(status=Status.QUEUED).select_related("user", "rung").order_by("enqueued_at").first()
    if snap.oldest_waiting is not None:
        snap.oldest_wait_s = (now - snap.oldest_waiting.enqueued_at).total_seconds()
    snap.running = list(Submission.objects.filter(status=Status.RUNNING).select_related("user", "rung").order_by("started_at")[:20])
    hour_ago = now - timedelta(hours=1)
    errors = Submission.objects.filter(outcome=Outcome.INFRA_ERROR, finished_at__gte=hour_ago)
    snap.infra_errors = list(errors.select_related("user", "rung").order_by("-finished_at")[:20])
    snap.infra_by_code = [(row["error_code"] or "(none)", row["n"]) for row in errors.values("error_code").annotate(n=Count("pk")).order_by("-n")]
    snap.checks_waiting = RungCheck.objects.filter(status=Status.QUEUED).count()
    snap.checks_running = RungCheck.objects.filter(status=Status.RUNNING).count()
    snap.rejudges_waiting = RejudgeResult.objects.exclude(status=Status.DONE).count()
    return snap


def as_json(snap: Snapshot) -> dict[str, Any]:
    return {
        "queues": [{"name": q.name, "waiting_db": q.waiting_db, "running_db": q.running_db, "broker_length": q.broker_length} for q in snap.queues],
        "broker_error": snap.broker_error,
        "workers": snap.workers,
        "workers_error": snap.workers_error,
        "oldest_waiting": {"id": snap.oldest_waiting.pk, "wait_s": snap.oldest_wait_s} if snap.oldest_waiting else None,
        "running": [s.pk for s in snap.running],
        "infra_errors_last_hour": sum(n for _, n in snap.infra_by_code),
        "infra_by_code": dict(snap.infra_by_code),
        "checks_waiting": snap.checks_waiting,
        "checks_running": snap.checks_running,
        "rejudges_waiting": snap.rejudges_waiting,
    }
