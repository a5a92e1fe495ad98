"""The submission lifecycle: submit, claim, grade, record.

Views and tasks call these; they hold the logic. Grading is idempotent: a
worker claims a submission with a conditional UPDATE, so a redelivered or
duplicated task finds nothing to claim and does nothing.
"""

from __future__ import annotations

import logging
import math
import os
import socket
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from exercises.jobs import job_for
from exercises.models import Rung, RungVersion
from sandbox.jobs import Job, JobResult
from sandbox.runner import SandboxRunner

from . import events, messages
from .constants import OUTCOME_RANK, QUEUE_GPU, QUEUE_RUN, QUEUE_SUBMIT, Kind, Outcome, Status
from .exceptions import GraderBusy, RetryLater, SubmissionInFlight, SubmissionRejected, SubmissionThrottled

__all__ = ["GraderBusy", "RetryLater", "SubmissionInFlight", "SubmissionRejected", "SubmissionThrottled"]
from .models import Progress, Submission, SubmissionTestResult

log = logging.getLogger(__name__)



def validate_code(code: str) -> None:
    size = len(code.encode("utf-8", errors="surrogatepass"))
    if size > settings.GRADER_MAX_CODE_BYTES:
        raise SubmissionRejected(messages.CODE_TOO_LARGE.format(size=size, limit=settings.GRADER_MAX_CODE_BYTES))
    if "\x00" in code:
        raise SubmissionRejected(messages.CODE_NOT_TEXT)
    try:
        code.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SubmissionRejected(messages.CODE_NOT_TEXT) from exc


def queue_for(version: RungVersion, kind: str) -> str:
    """GPU work, Submits and Runs have separate queues so a burst of one kind
    never starves the others."""
    if version.gpu and settings.SANDBOX_GPU_ENABLED:
        return QUEUE_GPU
    return QUEUE_SUBMIT if kind == Kind.SUBMIT else QUEUE_RUN


def enqueue_submission(submission_id: int, queue: str) -> None:
    from .tasks import grade_submission_task

    grade_submission_task.apply_async(args=(submission_id,), queue=queue)


def _check_rate(user: Any) -> None:
    window = timezone.now() - timedelta(seconds=60)
    recent = list(Submission.objects.filter(user=user, enqueued_at__gte=window).order_by("enqueued_at").values_list("enqueued_at", flat=True)[: settings.GRADER_RATE_LIMIT_PER_MIN])
    if len(recent) >= settings.GRADER_RATE_LIMIT_PER_MIN:
        wait = max(1, math.ceil(60 - (timezone.now() - recent[0]).total_seconds()))
        raise SubmissionThrottled(messages.THROTTLED.format(limit=settings.GRADER_RATE_LIMIT_PER_MIN, seconds=wait), wait)


def _check_queue_room() -> None:
    # Run and Submit share the worker slots, so the wait depends on both.
    # NOTE: count-then-insert may overshoot by the requests in flight; the
    # bound is about waiting times, not an exact capacity.
    waiting = Submission.objects.filter(status=Status.QUEUED).count()
    if waiting >= settings.GRADER_MAX_QUEUED:
        wait = max(5, math.ceil(waiting * settings.GRADER_SECONDS_PER_JOB_ESTIMATE / max(1, settings.GRADER_WORKER_SLOTS)))
        raise GraderBusy(messages.BUSY.format(seconds=wait), wait)


def submit_solution(*, user: Any, rung: Rung, kind: str, code: str) -> Submission:
    """Store a Run or Submit of ``code`` and enqueue its grading after commit.

    Backpressure, in order: a learner has at most one job in flight per rung
    (a new Run replaces a queued one; anything else waits for the result),
    a per-learner rate limit, and a bounded queue per kind.
    """
    validate_code(code)
    if kind not in Kind.values:
        raise SubmissionRejected("Unknown kind of submission.")
    version = rung.current_version
    if version is None:
        raise SubmissionRejected("This exercise is not published yet.")
    queue = queue_for(version, kind)
    if kind == Kind.RUN:
        queued_run = Submission.objects.filter(user=user, rung=rung, kind=Kind.RUN, status=Status.QUEUED).first()
        if queued_run is not None:
            # Same row, same queue message: only the newest code gets graded.
            if Submission.objects.filter(pk=queued_run.pk, status=Status.QUEUED).update(code=code, rung_version=version):
                queued_run.refresh_from_db()
                return queued_run
    _check_rate(user)
    _check_queue_room()
    try:
        with transaction.atomic():
            submission = Submission.objects.create(user=user, rung=rung, rung_version=version, kind=kind, code=code)
            transaction.on_commit(lambda: enqueue_submission(submission.pk, queue))
    except IntegrityError as exc:
        if Submission.objects.filter(user=user, rung=rung, status__in=[Status.QUEUED, Status.RUNNING]).exists():
            raise SubmissionInFlight(messages.IN_FLIGHT) from exc
        raise
    return submission


def claim_submission(submission_id: int, worker: str = "") -> bool:
    """Move a queued submission to running; False when another worker has it."""
    claimed = Submission.objects.filter(pk=submission_id, status=Status.QUEUED).update(
        status=Status.RUNNING, started_at=timezone.now(), attempts=F("attempts") + 1, claimed_by=worker
    )
    return claimed == 1


def build_job(submission: Submission) -> Job:
    return job_for(submission.rung_version, submission.kind, submission.code)


_runners: dict[tuple[int, str, bool, int], SandboxRunner] = {}


def default_runner() -> SandboxRunner:
    """This process's runner, with its pool of pre-started containers.

    One per process (and per configuration): Celery's prefork children each
    keep SANDBOX_POOL_SIZE warm containers, refilled after each job.
    """
    image = settings.SANDBOX_IMAGE
    if not image:
        from sandbox.build import image_tag

        image = image_tag()
    key = (os.getpid(), image, settings.SANDBOX_GPU_ENABLED, settings.SANDBOX_POOL_SIZE)
    runner = _runners.get(key)
    if runner is None:
        runner = SandboxRunner(
            image,
            gpu_enabled=settings.SANDBOX_GPU_ENABLED,
            runtime=settings.SANDBOX_RUNTIME,
            pool_size=settings.SANDBOX_POOL_SIZE,
            pool_owner=f"{socket.gethostname()}:{os.getpid()}",
            cleanup_in_background=settings.SANDBOX_POOL_SIZE > 0,
        )
        _runners[key] = runner
    return runner


def close_runners() -> None:
    """Remove this process's pre-started containers (on worker shutdown)."""
    for key in [key for key in _runners if key[0] == os.getpid()]:
        _runners.pop(key).close()


def _live_test_recorder(submission: Submission) -> Callable[[str, dict[str, Any]], None]:
    hidden = submission.kind == Kind.SUBMIT
    version = submission.rung_version
    counter = {"order": 0}

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind != "test":
            return
        counter["order"] += 1
        message = version.hidden_description(data["name"]) if hidden and data["outcome"] != "passed" else data["message"]
        SubmissionTestResult.objects.update_or_create(
            submission=submission,
            name=data["name"],
            defaults={"order": counter["order"], "outcome": data["outcome"], "duration_s": data["duration_s"], "message": message if not (hidden and data["outcome"] == "passed") else "", "hidden": hidden},
        )
        events.publish_changed(submission.channel)

    return on_event


def grade_submission(submission_id: int, *, runner: SandboxRunner | None = None, worker: str = "") -> Submission | None:
    """Claim, grade and record one submission; None when there was nothing to claim."""
    if not claim_submission(submission_id, worker):
        log.info("submission %s already claimed or gone; nothing to do", submission_id)
        return None
    submission = Submission.objects.select_related("rung_version__rung", "user").get(pk=submission_id)
    events.publish_changed(submission.channel)
    result = (runner or default_runner()).run(build_job(submission), on_event=_live_test_recorder(submission))
    if result.is_infra_error and result.error_code != "report_infra" and submission.attempts < settings.GRADER_MAX_ATTEMPTS:
        # Ours, not the learner's: put it back in the queue for another try.
        Submission.objects.filter(pk=submission.pk).update(
            status=Status.QUEUED, error_code=result.error_code, message=messages.INFRA_ERRORS.get(result.error_code, "")
        )
        log.warning("submission %s: %s (%s); retrying", submission.pk, result.error_code, result.message)
        raise RetryLater(result.message, delay_s=2 ** submission.attempts)
    if result.is_infra_error:
        log.error("submission %s ended as infra_error: %s %s", submission.pk, result.error_code, result.message)
    record_results(submission, result)
    return submission


@transaction.atomic
def record_results(submission: Submission, result: JobResult) -> None:
    """Write the outcome and one row per test; update the learner's progress."""
    version: RungVersion = submission.rung_version
    hidden = submission.kind == Kind.SUBMIT
    leaks = set(result.state_leaks)
    submission.test_results.all().delete()
    rows = []
    for order, test in enumerate(result.tests):
        message = test.message
        if hidden:
            # The learner sees only the author's description of a hidden test.
            message = "" if test.outcome == "passed" else version.hidden_description(test.name)
            if test.name in leaks:
                message = f"{message} {messages.STATE_LEAK_NOTE}".strip()
        rows.append(
            SubmissionTestResult(
                submission=submission,
                order=order,
                name=test.name,
                outcome=test.outcome,
                duration_s=test.duration_s,
                message=message,
                detail=test.message if hidden else "",
                hidden=hidden,
            )
        )
    SubmissionTestResult.objects.bulk_create(rows)
    now = timezone.now()
    timings = dict(result.timings)
    if submission.started_at is not None:
        timings["queue_wait_s"] = round((submission.started_at - submission.enqueued_at).total_seconds(), 3)
    message = result.message
    if result.is_infra_error:
        message = messages.INFRA_ERRORS.get(result.error_code or "attempts_exhausted", messages.OUTCOME_SUMMARY[Outcome.INFRA_ERROR])
    elif hidden and result.outcome != Outcome.ERROR:
        message = ""  # a hidden test's text must not leak through the summary
    Submission.objects.filter(pk=submission.pk).update(
        status=Status.DONE,
        outcome=result.outcome,
        message=message,
        error_code=result.error_code,
        stdout=result.stdout if not hidden else "",
        stderr=result.stderr if not hidden else "",
        timings=timings,
        peak_memory_bytes=result.peak_memory_bytes,
        finished_at=now,
    )
    if hidden and not result.is_infra_error:
        update_progress(submission.user, version.rung, result.outcome, now)
    transaction.on_commit(lambda: events.publish_changed(submission.channel))


def update_progress(user: Any, rung: Rung, outcome: str, when: Any) -> Progress:
    progress, _ = Progress.objects.select_for_update().get_or_create(user=user, rung=rung)
    progress.attempts += 1
    if not progress.best_outcome or OUTCOME_RANK[Outcome(outcome)] > OUTCOME_RANK[Outcome(progress.best_outcome)]:
        progress.best_outcome = outcome
    if outcome == Outcome.PASSED and progress.solved_at is None:
        progress.solved_at = when
    progress.save()
    return progress


def has_solved(user: Any, rung: Rung) -> bool:
    if not user.is_authenticated:
        return False
    return Progress.objects.filter(user=user, rung=rung, solved_at__isnull=False).exists()


def can_see_reference(user: Any, rung: Rung) -> bool:
    """The reference solution and hidden-test descriptions unlock on a passing Submit."""
    return bool(user.is_authenticated and (user.is_staff or has_solved(user, rung)))
