"""The reaper: the database is the truth, the broker only a hint.

A submission stuck in ``queued`` (its message lost, e.g. Redis restarted
without persistence) is enqueued again; one stuck in ``running`` past the
hard time limit (its worker died) goes back to ``queued``. Duplicates are
harmless: grading claims a row with a conditional UPDATE. After
GRADER_MAX_ATTEMPTS the submission ends as ``infra_error``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from . import messages
from .constants import Outcome, Status
from .models import Submission
from .services import enqueue_submission, queue_for

log = logging.getLogger(__name__)


@dataclass
class SweepReport:
    requeued: list[int] = field(default_factory=list)
    reset: list[int] = field(default_factory=list)
    abandoned: list[int] = field(default_factory=list)


def sweep_stuck_submissions(now: datetime | None = None) -> SweepReport:
    now = now or timezone.now()
    report = SweepReport()
    queued_deadline = now - timedelta(seconds=settings.GRADER_QUEUED_STALE_S)
    running_deadline = now - timedelta(seconds=settings.GRADER_HARD_TIME_LIMIT_S + 30)

    for submission in Submission.objects.filter(status=Status.RUNNING, started_at__lt=running_deadline).select_related("rung_version"):
        if submission.attempts >= settings.GRADER_MAX_ATTEMPTS:
            ended = Submission.objects.filter(pk=submission.pk, status=Status.RUNNING).update(
                status=Status.DONE,
                outcome=Outcome.INFRA_ERROR,
                error_code="attempts_exhausted",
                message=messages.INFRA_ERRORS["attempts_exhausted"],
                finished_at=now,
            )
            if ended:
                report.abandoned.append(submission.pk)
            continue
        # Only if still running: a worker finishing right now wins.
        if Submission.objects.filter(pk=submission.pk, status=Status.RUNNING).update(status=Status.QUEUED, enqueued_at=now):
            report.reset.append(submission.pk)
            queue = queue_for(submission.rung_version, submission.kind)
            transaction.on_commit(partial(enqueue_submission, submission.pk, queue))

    for submission in Submission.objects.filter(status=Status.QUEUED, enqueued_at__lt=queued_deadline).select_related("rung_version"):
        Submission.objects.filter(pk=submission.pk, status=Status.QUEUED).update(enqueued_at=now)
        report.requeued.append(submission.pk)
        queue = queue_for(submission.rung_version, submission.kind)
        transaction.on_commit(partial(enqueue_submission, submission.pk, queue))
    if report.requeued or report.reset or report.abandoned:
        log.warning("sweeper: requeued %s, reset %s, abandoned %s", report.requeued, report.reset, report.abandoned)
    return report


def recover_claims(worker: str) -> list[int]:
    """Put back what ``worker`` had claimed before it died: called when a
    worker of that name starts, so its jobs are graded once it is back."""
    recovered = []
    for submission in Submission.objects.filter(status=Status.RUNNING, claimed_by=worker).select_related("rung_version"):
        if Submission.objects.filter(pk=submission.pk, status=Status.RUNNING, claimed_by=worker).update(status=Status.QUEUED):
            recovered.append(submission.pk)
            enqueue_submission(submission.pk, queue_for(submission.rung_version, submission.kind))
    if recovered:
        log.warning("worker %s restarted: re-enqueued its interrupted submissions %s", worker, recovered)
    return recovered
