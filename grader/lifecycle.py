"""The lifecycle of every claimed job: a Submission, a RejudgeResult, a RungCheck.

Each is a row with ``status`` (``queued`` -> ``running`` -> ``done``), the
claimer (``claimed_by``), the number of ``attempts`` and the times it was
queued, started and finished. This module is the only one that changes a
job's status, and each change is a conditional UPDATE whose row count is
checked:

- ``claim``: queued -> running, by one worker; a redelivered task finds
  nothing to claim and does nothing;
- ``requeue``: running -> queued, only by its claimer (an infrastructure
  failure worth another try);
- ``finish``: running -> done, only by its claimer: a worker that lost its
  claim (the reaper gave the job to another worker) writes nothing;
- ``reap``: one reaper for every job type. A job ``running`` past its type's hard
  limit (its worker died) goes back to ``queued``, or ends after
  GRADER_MAX_ATTEMPTS; a job ``queued`` for long (its broker message lost)
  is enqueued again. Duplicates are harmless: see ``claim``.

Each job type is declared once as a ``JobType``. grader declares
submissions and rejudges here; authoring and lti register theirs (Checks,
score posts), so the dependency points from them to grader only. (A job's
``kind``, Run or Submit, is another thing: ``grader.constants.Kind``.)

Tasks stay leaves: work is enqueued by task name, never by importing a
tasks module.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.db.models import F
from django.utils import timezone

from core.metrics import REAPER_RECOVERIES
from exercises.constants import GpuNeed, gpu_need

from . import messages, tallies
from .constants import QUEUE_GPU, QUEUE_RUN, QUEUE_SUBMIT, ErrorCode, Kind, Outcome, Status
from .models import RejudgeResult, Submission

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobType:
    """One type of claimed job: its model, its task and what ending it as abandoned means.

    The model has ``status``, ``claimed_by``, ``attempts``, ``enqueued_at``,
    ``started_at`` and ``finished_at``.
    """

    label: str
    model: type[models.Model]
    # The Celery task, by name: it takes the row's pk.
    task: str
    # The queue a row is graded on (run, submit or gpu).
    queue_of: Callable[[Any], str]
    # Seconds after which a running job cannot still be alive (its task's hard limit).
    hard_limit_s: Callable[[], float]
    # The fields that end a job whose attempts are used up.
    abandoned: Callable[[], dict[str, Any]]
    select_related: tuple[str, ...] = ()
    # Called with the pk in the transaction that ends a job its claimer did not
    # finish (cancelled, or abandoned by the reaper); a claimer's finish does its own.
    ended: Callable[[int], None] | None = None

    def rows(self) -> models.QuerySet[Any]:
        return self.model._default_manager.all()


_JOB_TYPES: dict[str, JobType] = {}


def register(job_type: JobType) -> JobType:
    """Make ``job_type`` known to the reaper and to ``recover_claims``."""
    _JOB_TYPES[job_type.label] = job_type
    return job_type


def job_types() -> list[JobType]:
    return list(_JOB_TYPES.values())


def queue_named(kind: str, gpu: str | bool) -> str:
    """GPU work, Submits and Runs have separate queues so a burst of one kind
    never starves the others.

    Decided by the process that enqueues (the web, the reaper), from its own
    GRADER_GPU_WORKERS: whether this platform runs workers on the ``gpu``
    queue. With them, every GPU rung goes there. Without them, a
    ``preferred`` rung is graded on the CPU queues and a ``required`` one
    still goes to ``gpu``, where it waits for a GPU worker (the page says
    so; ``grader.checks`` warns at start-up).
    """
    need = gpu_need(gpu)
    if need == GpuNeed.REQUIRED or (need == GpuNeed.PREFERRED and settings.GRADER_GPU_WORKERS):
        return QUEUE_GPU
    return QUEUE_SUBMIT if kind == Kind.SUBMIT else QUEUE_RUN


def queue_for(version: Any, kind: str) -> str:
    """The queue of a Run or Submit against ``version``."""
    return queue_named(kind, version.gpu)


def _grading_hard_limit_s() -> float:
    return float(settings.GRADER_HARD_TIME_LIMIT_S)


SUBMISSIONS = register(
    JobType(
        label="submission",
        model=Submission,
        task="grader.grade_submission_task",
        queue_of=lambda row: queue_for(row.rung_version, row.kind),
        hard_limit_s=_grading_hard_limit_s,
        abandoned=lambda: {
            "outcome": Outcome.INFRA_ERROR,
            "error_code": ErrorCode.ATTEMPTS_EXHAUSTED,
            "message": messages.INFRA_ERRORS[ErrorCode.ATTEMPTS_EXHAUSTED],
        },
        select_related=("rung_version",),
        ended=tallies.count_submission,
    )
)

REJUDGES = register(
    JobType(
        label="rejudge",
        model=RejudgeResult,
        task="grader.rejudge_submission_task",
        # The same queue as the original grading: a rejudge waits its turn with learners' jobs.
        queue_of=lambda row: queue_for(row.new_version, row.submission.kind),
        hard_limit_s=_grading_hard_limit_s,
        abandoned=lambda: {
            "new_outcome": Outcome.INFRA_ERROR,
            "error_code": ErrorCode.ATTEMPTS_EXHAUSTED,
            "message": messages.INFRA_ERRORS[ErrorCode.ATTEMPTS_EXHAUSTED],
        },
        select_related=("new_version", "submission"),
    )
)


@dataclass(frozen=True)
class Claim:
    """A worker's hold on one job. ``token`` is what ``claimed_by`` holds:
    the worker's name and a random suffix, so a worker restarted under the
    same name is still a different claimer."""

    job_type: JobType
    pk: int
    token: str
    attempt: int


def _token(worker: str) -> str:
    return f"{worker or 'local'}#{secrets.token_hex(6)}"[-200:]


def claim(job_type: JobType, pk: int, worker: str = "") -> Claim | None:
    """Move a queued job to running for ``worker``; None when there is nothing to claim."""
    token = _token(worker)
    claimed = job_type.rows().filter(pk=pk, status=Status.QUEUED).update(
        status=Status.RUNNING, started_at=timezone.now(), attempts=F("attempts") + 1, claimed_by=token
    )
    if claimed != 1:
        log.info("%s %s already claimed or gone; nothing to do", job_type.label, pk)
        return None
    attempt = job_type.rows().filter(pk=pk).values_list("attempts", flat=True).first() or 1
    return Claim(job_type, pk, token, int(attempt))


def _held(claim: Claim) -> models.QuerySet[Any]:
    return claim.job_type.rows().filter(pk=claim.pk, status=Status.RUNNING, claimed_by=claim.token)


def requeue(claim: Claim, **fields: Any) -> bool:
    """Put a job its claimer holds back in the queue (ours failed: another try).

    The caller enqueues it again (a Celery retry, or ``enqueue``). False when
    the claim was lost: the job is someone else's now.
    """
    return _held(claim).update(status=Status.QUEUED, enqueued_at=timezone.now(), **fields) == 1


def finish(claim: Claim, **fields: Any) -> bool:
    """End a job its claimer holds, writing ``fields`` with it.

    False when the claim was lost (the reaper gave the job to another
    worker): nothing is written, and the caller must write nothing else.
    Call inside the transaction that writes the job's other rows.
    """
    done = _held(claim).update(status=Status.DONE, finished_at=timezone.now(), **fields)
    if done != 1:
        log.warning("%s %s: claim %s lost; its result is dropped", claim.job_type.label, claim.pk, claim.token)
    return done == 1


def cancel(job_type: JobType, pk: int, **fields: Any) -> bool:
    """End a queued or running job at its owner's request, writing ``fields``.

    Its claimer, if any, loses the claim: its ``finish`` writes nothing, and
    ``holds`` tells it to stop the job. False when the job had already ended.
    """
    with transaction.atomic():
        cancelled = job_type.rows().filter(pk=pk, status__in=[Status.QUEUED, Status.RUNNING]).update(
            status=Status.DONE, finished_at=timezone.now(), claimed_by="", **fields
        )
        if cancelled == 1 and job_type.ended is not None:
            job_type.ended(pk)
    return cancelled == 1


def lock_held(claim: Claim) -> bool:
    """Lock ``claim``'s job row until the transaction ends, if the claim still holds it; whether it does.

    Call inside a transaction that writes rows of a running job: a finish,
    cancel or reap waits for it, and one that came first makes it False.
    """
    return _held(claim).select_for_update().values_list("pk", flat=True).first() is not None


def holds(claim: Claim) -> bool:
    """Whether ``claim`` still holds its job (not cancelled, not reaped)."""
    return _held(claim).exists()


def lost(claim: Claim) -> bool:
    """Whether ``claim``'s job is visibly someone else's now (cancelled or reaped).

    Unlike ``not holds(claim)``, a row this connection cannot see at all is
    not "lost": a watcher on its own connection must not stop a job whose
    claim is still uncommitted in the claimer's transaction.
    """
    row = claim.job_type.rows().filter(pk=claim.pk)
    return row.exists() and not _held(claim).exists()


def enqueue(job_type: JobType, pk: int, queue: str) -> None:
    """Send the job's task by name, so no service imports a tasks module.

    Call it after commit (``enqueue_on_commit``): a worker must find the row.
    """
    from config.celery import app

    if app.conf.task_always_eager:
        # send_task bypasses eager mode: run the registered task in-process instead.
        app.loader.import_default_modules()
        app.tasks[job_type.task].apply_async(args=(pk,), queue=queue)
        return
    # The row is the result: nobody waits on the task's. Without this, Celery
    # subscribes to the result channel on every send (and unsubscribes
    # when the handle is collected): two Redis round trips per job.
    app.send_task(job_type.task, args=(pk,), queue=queue, ignore_result=True)


def enqueue_on_commit(job_type: JobType, pk: int, queue: str) -> None:
    transaction.on_commit(lambda: enqueue(job_type, pk, queue))


@dataclass
class ReapReport:
    requeued: list[tuple[str, int]] = field(default_factory=list)
    reset: list[tuple[str, int]] = field(default_factory=list)
    abandoned: list[tuple[str, int]] = field(default_factory=list)


def reap(now: datetime | None = None) -> ReapReport:
    """Recover every type of job that stopped making progress (the periodic sweep).

    The database is the truth, the broker only a hint. Each change is
    conditional on the row still being in the state it was read in: a
    worker finishing right now wins.
    """
    now = now or timezone.now()
    report = ReapReport()
    queued_deadline = now - timedelta(seconds=settings.GRADER_QUEUED_STALE_S)
    for job_type in job_types():
        running_deadline = now - timedelta(seconds=job_type.hard_limit_s() + 30)
        stuck = job_type.rows().filter(status=Status.RUNNING, started_at__lt=running_deadline).select_related(*job_type.select_related)
        for row in stuck:
            still = job_type.rows().filter(pk=row.pk, status=Status.RUNNING, claimed_by=row.claimed_by)
            if row.attempts >= settings.GRADER_MAX_ATTEMPTS:
                with transaction.atomic():
                    if still.update(status=Status.DONE, finished_at=now, **job_type.abandoned()):
                        report.abandoned.append((job_type.label, row.pk))
                        if job_type.ended is not None:
                            job_type.ended(row.pk)
                continue
            if still.update(status=Status.QUEUED, enqueued_at=now):
                report.reset.append((job_type.label, row.pk))
                enqueue_on_commit(job_type, row.pk, job_type.queue_of(row))
        lost = job_type.rows().filter(status=Status.QUEUED, enqueued_at__lt=queued_deadline).select_related(*job_type.select_related)
        for row in lost:
            if job_type.rows().filter(pk=row.pk, status=Status.QUEUED).update(enqueued_at=now):
                report.requeued.append((job_type.label, row.pk))
                enqueue_on_commit(job_type, row.pk, job_type.queue_of(row))
    for action, jobs in (("requeued", report.requeued), ("reset", report.reset), ("abandoned", report.abandoned)):
        for label, _pk in jobs:
            REAPER_RECOVERIES.labels(label, action).inc()
    if report.requeued or report.reset or report.abandoned:
        log.warning("reaper: requeued %s, reset %s, abandoned %s", report.requeued, report.reset, report.abandoned)
    return report


def recover_claims(worker: str) -> list[tuple[str, int]]:
    """Put back every job ``worker`` had claimed before it died.

    Called when a worker of that name starts, so its jobs are graded once it
    is back instead of after the reaper's deadline.
    """
    recovered: list[tuple[str, int]] = []
    prefix = f"{worker}#"
    for job_type in job_types():
        for row in job_type.rows().filter(status=Status.RUNNING, claimed_by__startswith=prefix).select_related(*job_type.select_related):
            if job_type.rows().filter(pk=row.pk, status=Status.RUNNING, claimed_by=row.claimed_by).update(status=Status.QUEUED, enqueued_at=timezone.now()):
                recovered.append((job_type.label, row.pk))
                enqueue(job_type, row.pk, job_type.queue_of(row))
    if recovered:
        log.warning("worker %s restarted: re-enqueued its interrupted jobs %s", worker, recovered)
    return recovered
