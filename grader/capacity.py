"""How fast this deployment grades, measured from the jobs it has just finished.

The queue bound and every "try again in N s" derive from one figure: the
median time a worker slot spends on a job (claim to finish) over the last
jobs finished. Until enough jobs have finished (a fresh deployment) the
configured estimate stands in. Under load each job takes longer (the slots
share the cores), so the bound shrinks and the waits quoted grow with it.
"""

from __future__ import annotations

import math
import statistics
import threading
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from .constants import Status
from .models import Submission

# The last jobs measured, within this window: recent enough to follow the load.
SAMPLE_SIZE = 50
WINDOW = timedelta(minutes=10)
MIN_SAMPLES = 5


@dataclass(frozen=True)
class Capacity:
    """Seconds a slot spends on one job, and the slots; ``measured`` False: the estimate."""

    seconds_per_job: float
    slots: int
    measured: bool
    # The mean over the same jobs: what a queue of mixed jobs (quick Runs,
    # slower Submits) drains at; None: as ``seconds_per_job``.
    mean_seconds_per_job: float | None = None

    @property
    def drain_seconds_per_job(self) -> float:
        """Seconds a slot spends per job of a mixed queue, on average."""
        return self.mean_seconds_per_job if self.mean_seconds_per_job is not None else self.seconds_per_job

    @property
    def jobs_per_s(self) -> float:
        return self.slots / self.seconds_per_job

    def queue_bound(self) -> int:
        """Jobs that may wait: what the slots grade within GRADER_MAX_WAIT_S (or GRADER_MAX_QUEUED, when set)."""
        if settings.GRADER_MAX_QUEUED:
            return int(settings.GRADER_MAX_QUEUED)
        return max(1, math.floor(settings.GRADER_MAX_WAIT_S * self.jobs_per_s))

    def seconds_to_grade(self, jobs: float) -> int:
        """Whole seconds the slots need for ``jobs`` jobs, at least 1."""
        return max(1, math.ceil(jobs / self.jobs_per_s))


def measure_capacity() -> Capacity:
    """The capacity from the last finished submissions (one small query: the newest rows by key)."""
    slots = max(1, int(settings.GRADER_WORKER_SLOTS))
    since = timezone.now() - WINDOW
    rows = (
        Submission.objects.filter(status=Status.DONE, started_at__isnull=False)
        .order_by("-pk")
        .values_list("started_at", "finished_at")[:SAMPLE_SIZE]
    )
    durations = [
        (finished - started).total_seconds()
        for started, finished in rows
        if started is not None and finished is not None and since <= finished and started <= finished
    ]
    if len(durations) < MIN_SAMPLES:
        return Capacity(float(settings.GRADER_SECONDS_PER_JOB_ESTIMATE), slots, measured=False)
    return Capacity(max(0.05, statistics.median(durations)), slots, measured=True, mean_seconds_per_job=max(0.05, statistics.fmean(durations)))


# A page polling for its state asks for the capacity on every poll of a
# queued job; within a web process one measurement serves them for this long.
RECENT_MAX_AGE_S = 2.0
_recent: tuple[float, Capacity] | None = None
_recent_lock = threading.Lock()


def recent_capacity() -> Capacity:
    """``measure_capacity()``, measured at most ``RECENT_MAX_AGE_S`` ago in this process.

    For pacing a page's polls only: refusals and their Retry-After measure afresh.
    """
    global _recent
    now = time.monotonic()
    with _recent_lock:
        if _recent is not None and now - _recent[0] < RECENT_MAX_AGE_S:
            return _recent[1]
    capacity = measure_capacity()
    with _recent_lock:
        _recent = (now, capacity)
    return capacity


def forget_recent_capacity() -> None:
    """Drop the remembered measurement (tests, and a settings change)."""
    global _recent
    with _recent_lock:
        _recent = None
