"""When a page following a submission should ask for its state again.

A waiting learner's page fetches the state URL: on each live-update hint,
every few seconds as a safety net, and on its own timer when the live
stream is unavailable (Redis down, or past the per-process stream cap, as
under a class-sized burst). Each fetch is a request on the same cores that
grade, so a page polling every 0.7 s while forty jobs are ahead of it only
slows those jobs down. The state says when something is likely to have
changed: a job far back in the queue is asked about every few seconds, one
about to start or running soon after, and a finished one not at all.
"""

from __future__ import annotations

from .capacity import Capacity
from .constants import Status

# Never sooner (the page polled every 0.7 s before it was paced, so pacing
# only ever spaces polls out), and never later (the queue position a learner
# reads is at most this stale).
MIN_POLL_S = 0.7
MAX_POLL_S = 5.0
# A running job is asked about at least this often: its end is what matters.
MAX_RUNNING_POLL_S = 2.0


def _clamp(seconds: float, low: float, high: float) -> float:
    return min(high, max(low, seconds))


def next_poll_s(*, status: str, jobs_ahead: int | None, running_for_s: float | None, capacity: Capacity) -> float | None:
    """Seconds until the page should fetch the state again; None once done.

    Queued: half the time until the slots are expected to reach the job
    (``jobs_ahead``: queued before it, Runs and Submits alike, as they share
    the slots), so the position shown moves and the start is seen soon after
    it happens. Running: half of what a job is expected still to need. A
    queue of mixed jobs drains at the mean time per job, not the median
    (mostly quick Runs).
    """
    if status == Status.DONE:
        return None
    per_job = capacity.drain_seconds_per_job
    if status == Status.QUEUED:
        until_start = max(0, jobs_ahead or 0) / capacity.slots * per_job
        return round(_clamp(until_start / 2, MIN_POLL_S, MAX_POLL_S), 2)
    remaining = per_job - (running_for_s or 0.0)
    return round(_clamp(remaining / 2, MIN_POLL_S, MAX_RUNNING_POLL_S), 2)
