"""The submission lifecycle: submit, grade, record.

Views and tasks call these; they hold the logic. Every change of a
submission's status goes through ``grader.lifecycle`` (claim, requeue,
finish: conditional UPDATEs), and what the learner may see of a result is
decided by ``grader.results.present``.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import secrets
import threading
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Min
from django.utils import timezone

from core.learner_lock import lock_learner
from core.logs import bind_ids
from core.metrics import BUSY_REFUSALS
from core.runners import default_runner
from core.types import User
from core.write_guard import check_outside_write_transaction
from exercises.constants import GpuNeed, gpu_need
from exercises.jobs import job_for
from exercises.models import Rung, RungVersion
from sandbox import errors
from sandbox.interface import Runner
from sandbox.jobs import Job, JobResult

from . import events, lifecycle, messages, results, signals, speed_board, tallies
from .capacity import measure_capacity
from .constants import OUTCOME_RANK, ErrorCode, Kind, Outcome, Status
from .exceptions import (
    CodeRejected,
    GraderBusy,
    NothingToCancel,
    RetryLater,
    SubmissionInFlight,
    SubmissionRejected,
    SubmissionThrottled,
    TooManyJobsInFlight,
)
from .live import LiveTestRows
from .metrics import count_graded
from .models import Progress, Submission

__all__ = ["GraderBusy", "NothingToCancel", "RetryLater", "SubmissionInFlight", "SubmissionRejected", "SubmissionThrottled", "TooManyJobsInFlight"]

log = logging.getLogger(__name__)

# Seeds of the hidden tests' generated inputs: drawn per Submit, kept with it.
SEED_BITS = 31


def code_size(code: str) -> int:
    """The size the limit counts: UTF-8 bytes, as the browser's counter shows them."""
    return len(code.encode("utf-8", errors="surrogatepass"))


def validate_code(code: str) -> None:
    """The one rule for a learner's code, which the Run/Submit and draft forms
    and ``submit_solution`` all apply: at most GRADER_MAX_CODE_BYTES, and UTF-8
    text without NUL. Raises ``CodeRejected``."""
    size = code_size(code)
    if size > settings.GRADER_MAX_CODE_BYTES:
        raise CodeRejected(messages.CODE_TOO_LARGE.format(size=size, limit=settings.GRADER_MAX_CODE_BYTES), reason="too_large")
    if "\x00" in code:
        raise CodeRejected(messages.CODE_NOT_TEXT, reason="not_text")
    try:
        code.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CodeRejected(messages.CODE_NOT_TEXT, reason="not_text") from exc


queue_for = lifecycle.queue_for


def gpu_notice(version: Any) -> str:
    """What the workspace says about where ``version`` is graded, when it is not the plain CPU case."""
    need = gpu_need(version.gpu)
    if settings.GRADER_GPU_WORKERS or need == GpuNeed.NO:
        return ""
    return messages.GPU_REQUIRED_WAITS if need == GpuNeed.REQUIRED else messages.GPU_PREFERRED_ON_CPU


def _check_rate(user: User) -> None:
    window = timezone.now() - timedelta(seconds=60)
    recent = list(Submission.objects.filter(user=user, enqueued_at__gte=window).order_by("enqueued_at").values_list("enqueued_at", flat=True)[: settings.GRADER_RATE_LIMIT_PER_MIN])
    if len(recent) >= settings.GRADER_RATE_LIMIT_PER_MIN:
        wait = max(1, math.ceil(60 - (timezone.now() - recent[0]).total_seconds()))
        raise SubmissionThrottled(messages.THROTTLED.format(limit=settings.GRADER_RATE_LIMIT_PER_MIN, seconds=wait), wait)


def _check_queue_room() -> None:
    """Refuse a job when the queue holds what the slots grade within GRADER_MAX_WAIT_S.

    Both the bound and the Retry-After come from the measured grading rate
    (``grader.capacity``): Retry-After is the time the slots need to grade
    what is queued now, after which a job sent again waits no longer than
    the accepted wait.
    """
    # Run and Submit share the worker slots, so the wait depends on both.
    # NOTE: count-then-insert may overshoot by the requests in flight; the
    # bound is about waiting times, not an exact capacity.
    waiting = Submission.objects.filter(status=Status.QUEUED).count()
    capacity = measure_capacity()
    if waiting >= capacity.queue_bound():
        wait = capacity.seconds_to_grade(waiting)
        BUSY_REFUSALS.inc()
        raise GraderBusy(messages.BUSY.format(seconds=wait), wait)


def _check_jobs_in_flight(user: User) -> None:
    """A learner has at most GRADER_MAX_JOBS_IN_FLIGHT jobs queued or running, across all rungs.

    Retry-After is when the learner's oldest job should be done, at the
    measured time per job: its remaining share of a job's time if running,
    else the jobs ahead of it in the queue over the worker slots, plus its own.
    """
    limit = settings.GRADER_MAX_JOBS_IN_FLIGHT
    mine = Submission.objects.filter(user=user, status__in=[Status.QUEUED, Status.RUNNING])
    count = mine.count()
    if count < limit:
        return
    capacity = measure_capacity()
    per_job = capacity.seconds_per_job
    now = timezone.now()
    started = mine.filter(status=Status.RUNNING).aggregate(first=Min("started_at"))["first"]
    if started is not None:
        wait = per_job - (now - started).total_seconds()
    else:
        oldest = mine.aggregate(first=Min("enqueued_at"))["first"]
        ahead = Submission.objects.filter(status=Status.QUEUED, enqueued_at__lt=oldest).count() if oldest else 0
        wait = (ahead / capacity.slots + 1) * per_job
    seconds = max(1, math.ceil(wait))
    raise TooManyJobsInFlight(messages.TOO_MANY_IN_FLIGHT.format(count=count, limit=limit, seconds=seconds), seconds)


def submit_solution(*, user: User, rung: Rung, kind: str, code: str, prediction: float | None = None) -> Submission:
    """Store a Run or Submit of ``code`` and enqueue its grading after commit.

    Backpressure, in order: a learner has at most one job in flight per rung
    (a new Run replaces a queued one; anything else waits for the result),
    a bound on the learner's jobs in flight across rungs, a per-learner rate
    limit, and a bounded queue. Each Submit draws a fresh seed for the hidden
    tests' generated inputs, stored with it so a rejudge reproduces the grade.
    ``prediction``: the speed-up the learner predicted, kept for a Submit of
    a speed rung that asks for one (``speed_board.check_prediction``).
    """
    validate_code(code)
    if kind not in Kind.values:
        raise SubmissionRejected(messages.UNKNOWN_KIND)
    version = rung.current_version
    if version is None:
        raise SubmissionRejected(messages.NOT_PUBLISHED)
    predicted = speed_board.check_prediction(version, kind, prediction)
    queue = queue_for(version, kind)
    if kind == Kind.RUN:
        queued_run = Submission.objects.filter(user=user, rung=rung, kind=Kind.RUN, status=Status.QUEUED).first()
        if queued_run is not None:
            # Same row, same queue message: only the newest code gets graded.
            if Submission.objects.filter(pk=queued_run.pk, status=Status.QUEUED).update(code=code, rung_version=version):
                queued_run.refresh_from_db()
                return queued_run
    seed = secrets.randbits(SEED_BITS) if kind == Kind.SUBMIT else 0
    for last_try in (False, True):
        try:
            with transaction.atomic():
                # The learner's requests wait for each other here, so that
                # parallel ones cannot all pass the counts before any of them
                # is stored (nine jobs in flight against a cap of three).
                lock_learner(user)
                _check_jobs_in_flight(user)
                _check_rate(user)
                _check_queue_room()
                submission = Submission.objects.create(user=user, rung=rung, rung_version=version, kind=kind, code=code, seed=seed)
                speed_board.record_prediction(submission, predicted)
                lifecycle.enqueue_on_commit(lifecycle.SUBMISSIONS, submission.pk, queue)
            bind_ids(submission_id=submission.pk)
            log.info("%s %s of %s queued on %s", kind, submission.pk, rung.slug, queue)
            return submission
        except IntegrityError as exc:
            # One job in flight per learner and rung (a unique index).
            if Submission.objects.filter(user=user, rung=rung, status__in=[Status.QUEUED, Status.RUNNING]).exists():
                raise SubmissionInFlight(messages.IN_FLIGHT) from exc
            if last_try:
                raise
            # That job ended between the insert and this look: try once more.
    raise AssertionError("unreachable")


def build_job(submission: Submission, version: RungVersion | None = None) -> Job:
    """The sandbox job of ``submission`` (against ``version``, by default its own), with its seed."""
    return job_for(version or submission.rung_version, submission.kind, submission.code, seed=submission.seed)


class _CancelWatch:
    """Stops a job's container once its claim is lost: the learner cancelled
    it (``cancel_submission``) or the reaper gave it away. Checks every
    ``GRADER_CANCEL_POLL_S`` from its own thread while the runner waits."""

    def __init__(self, claim: lifecycle.Claim, runner: Runner) -> None:
        self._claim = claim
        self._runner = runner
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, container_id: str) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, args=(container_id,), daemon=True, name=f"cancel-watch-{self._claim.pk}")
            self._thread.start()

    def _run(self, container_id: str) -> None:
        try:
            while not self._done.wait(settings.GRADER_CANCEL_POLL_S):
                if lifecycle.lost(self._claim):
                    log.info("submission %s: cancelled; stopping its container", self._claim.pk)
                    self._runner.stop(container_id)
                    return
        except Exception:
            log.exception("submission %s: the cancel watch failed", self._claim.pk)
        finally:
            connection.close()  # this thread's own connection

    def close(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


def grade_submission(submission_id: int, *, runner: Runner | None = None, worker: str = "") -> Submission | None:
    """Claim, grade and record one submission; None when there was nothing to claim."""
    claim = lifecycle.claim(lifecycle.SUBMISSIONS, submission_id, worker)
    if claim is None:
        return None
    submission = Submission.objects.select_related("rung_version__rung", "user").get(pk=submission_id)
    events.publish_changed(submission.channel)
    runner = runner or default_runner()
    live_rows = LiveTestRows(submission, claim, settings.GRADER_LIVE_ROWS_EVERY_S)
    cancel_watch = _CancelWatch(claim, runner)

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind == "container":
            cancel_watch.watch(str(data["id"]))
        live_rows.on_event(kind, data)

    check_outside_write_transaction("the sandbox run")
    try:
        result = runner.run(build_job(submission), on_event=on_event)
    finally:
        cancel_watch.close()
    if result.outcome in results.STOPPED_EARLY and not result.tests and live_rows.reported:
        # A limit killed the container before its report: the tests it
        # reported live are its results, not "not run" (issue 59, item 5).
        result = dataclasses.replace(result, tests=list(live_rows.reported))
    if not lifecycle.holds(claim):
        log.info("submission %s: cancelled or reaped while it ran; its result is dropped", submission.pk)
        return None
    if result.is_infra_error and result.error_code in errors.RETRYABLE and claim.attempt < settings.GRADER_MAX_ATTEMPTS:
        # Ours, not the learner's: put it back in the queue for another try.
        if not lifecycle.requeue(claim, error_code=result.error_code, message=messages.infra_error(result.error_code, retrying=True)):
            return None
        log.warning("submission %s: %s (%s); retrying", submission.pk, result.error_code, result.message)
        raise RetryLater(result.message, delay_s=2 ** claim.attempt)
    if result.is_infra_error:
        log.error("submission %s ended as infra_error: %s %s", submission.pk, result.error_code, result.message)
    record_results(submission, result, claim)
    return submission


def record_results(submission: Submission, result: JobResult, claim: lifecycle.Claim) -> bool:
    """Finish the submission with ``result``: its outcome, one row per test, the learner's progress.

    The finish is conditional on ``claim`` (False, and nothing written, when
    it was lost). If writing fails anyway (e.g. the database refuses a
    string), the submission still ends: as ``infra_error`` with a stored
    fallback message, never left ``running``.
    """
    graded = results.present(result, kind=submission.kind, version=submission.rung_version)
    if submission.kind == Kind.SUBMIT:
        # The learner's prediction beside the ratio measured (issue 60, item 8).
        graded = dataclasses.replace(graded, message=speed_board.with_prediction(submission, graded.message, graded.timings))
    counted = (str(graded.outcome), str(graded.error_code or ""))
    try:
        finished = _write_grade(submission, graded, claim)
    except Exception:
        counted = (Outcome.INFRA_ERROR.value, ErrorCode.RECORD_FAILED)
        log.exception("submission %s: could not record its result; storing the fallback", submission.pk)
        with transaction.atomic():
            submission.test_results.all().delete()
            finished = lifecycle.finish(
                claim, outcome=Outcome.INFRA_ERROR, error_code=ErrorCode.RECORD_FAILED, message=messages.infra_error(ErrorCode.RECORD_FAILED),
                stdout="", stderr="", timings={}, peak_memory_bytes=None, machine={},
            )
            if finished:
                tallies.count_submission(submission.pk)
    transaction.on_commit(lambda: events.publish_changed(submission.channel))
    if finished:
        count_graded(submission, *counted, graded.timings)
        log.info("%s %s graded: %s %s", submission.kind, submission.pk, *counted)
    return finished


@transaction.atomic
def _write_grade(submission: Submission, graded: results.Graded, claim: lifecycle.Claim) -> bool:
    timings = dict(graded.timings)
    if submission.started_at is not None:
        timings["queue_wait_s"] = round((submission.started_at - submission.enqueued_at).total_seconds(), 3)
    finished = lifecycle.finish(
        claim, outcome=graded.outcome, message=graded.message, error_code=graded.error_code, stdout=graded.stdout,
        stderr=graded.stderr, timings=timings, peak_memory_bytes=graded.peak_memory_bytes, machine=graded.machine,
    )
    if not finished:
        return False
    results.write_test_rows(submission, graded.tests)
    if submission.kind == Kind.SUBMIT and graded.outcome != Outcome.INFRA_ERROR:
        # Dated when the learner pressed Submit, not when a busy queue got to it:
        # a deadline counts what the learner did by then (courses.deadlines).
        update_progress(submission.user, submission.rung_version.rung, graded.outcome, submission.enqueued_at)
        speed_board.record_standing(submission, graded.outcome, graded.timings, graded.machine)
        if graded.outcome == Outcome.PASSED:
            signals.announce_submit_passed_on_commit(submission.pk, submission.user_id, submission.rung_id)
    tallies.count_submission(submission.pk)  # last: its rows are locked until the commit
    return True


def update_progress(user: User, rung: Rung, outcome: str, when: Any) -> Progress:
    progress, _ = Progress.objects.select_for_update().get_or_create(user=user, rung=rung)
    progress.attempts += 1
    if not progress.best_outcome or OUTCOME_RANK[Outcome(outcome)] > OUTCOME_RANK[Outcome(progress.best_outcome)]:
        progress.best_outcome = outcome
    if outcome == Outcome.PASSED and progress.solved_at is None:
        progress.solved_at = when
    progress.save()
    return progress


def cancel_submission(submission: Submission) -> None:
    """Stop a queued or running job at its learner's request: it ends as
    ``cancelled`` and never counts as an attempt. A running job loses its
    claim, so its worker stops the container (``_CancelWatch``) and records
    nothing. Raises ``NothingToCancel`` (a 409) when the job had already ended."""
    if not lifecycle.cancel(lifecycle.SUBMISSIONS, submission.pk, outcome=Outcome.CANCELLED, message="", error_code=""):
        raise NothingToCancel(messages.NOTHING_TO_CANCEL)
    transaction.on_commit(lambda: events.publish_changed(submission.channel))


def has_solved(user: User, rung: Rung) -> bool:
    if not user.is_authenticated:
        return False
    return Progress.objects.filter(user=user, rung=rung, solved_at__isnull=False).exists()


def can_see_reference(user: User, rung: Rung) -> bool:
    """The reference solution and hidden-test descriptions unlock on a passing Submit."""
    return bool(user.is_authenticated and (user.is_staff or has_solved(user, rung)))
