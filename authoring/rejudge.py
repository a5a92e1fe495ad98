"""Rejudging: grade submissions again into separate records, preview, apply.

Grading a RejudgeResult never touches its submission. ``apply_rejudge``
then copies the new grade onto each submission whose outcome changed and
recomputes the learners' progress; the result rows keep both grades.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import Min
from django.utils import timezone

from exercises.jobs import job_for
from grader import messages
from grader.constants import OUTCOME_RANK, Kind, Outcome, Status
from grader.models import Progress, Rejudge, RejudgeResult, Submission, SubmissionTestResult
from grader.services import queue_for
from sandbox.runner import SandboxRunner

log = logging.getLogger(__name__)


def _tests_of(submission: Submission) -> list[dict[str, Any]]:
    return [{"name": row.name, "outcome": row.outcome, "message": row.message, "detail": row.detail} for row in submission.test_results.all()]


def enqueue_rejudge_result(result_id: int, queue: str) -> None:
    from .tasks import rejudge_submission_task

    rejudge_submission_task.apply_async(args=(result_id,), queue=queue)


@transaction.atomic
def start_rejudge(submissions: Iterable[Submission], *, target: str, user: Any, note: str = "") -> Rejudge:
    """Queue a regrade of each finished submission against ``target`` (current or original version)."""
    rejudge = Rejudge.objects.create(created_by=user, target=target, note=note[:300])
    queued: list[tuple[int, str]] = []
    for submission in submissions:
        if submission.status != Status.DONE:
            continue
        version = submission.rung_version
        if target == Rejudge.Target.CURRENT:
            version = submission.rung.current_version or version
        result = RejudgeResult.objects.create(
            rejudge=rejudge,
            submission=submission,
            old_version=submission.rung_version,
            new_version=version,
            old_outcome=submission.outcome,
            old_tests=_tests_of(submission),
        )
        # The same queue as the original grading: a rejudge waits its turn with learners' jobs.
        queued.append((result.pk, queue_for(version, submission.kind)))

    def enqueue_all() -> None:
        for pk, queue in queued:
            enqueue_rejudge_result(pk, queue)

    transaction.on_commit(enqueue_all)
    return rejudge


def rejudge_one(result_id: int, *, runner: SandboxRunner | Any | None = None) -> RejudgeResult | None:
    """Claim one queued result, grade its submission's code, store the grade on the result only."""
    claimed = RejudgeResult.objects.filter(pk=result_id, status=Status.QUEUED).update(status=Status.RUNNING, started_at=timezone.now())
    if claimed != 1:
        return None
    result = RejudgeResult.objects.select_related("submission", "new_version").get(pk=result_id)
    submission, version = result.submission, result.new_version
    if runner is None:
        from grader.services import default_runner

        runner = default_runner()
    job = job_for(version, submission.kind, submission.code)
    graded = runner.run(job)
    hidden = submission.kind == Kind.SUBMIT
    tests = []
    for case in graded.tests:
        message = case.message
        if hidden:
            message = "" if case.outcome == "passed" else version.hidden_description(case.name)
        tests.append({"name": case.name, "outcome": case.outcome, "message": message, "detail": case.message if hidden else ""})
    summary = graded.message
    if graded.is_infra_error:
        summary = messages.INFRA_ERRORS.get(graded.error_code or "attempts_exhausted", graded.message)
    elif hidden and graded.outcome != Outcome.ERROR:
        summary = ""
    RejudgeResult.objects.filter(pk=result_id).update(
        status=Status.DONE, new_outcome=graded.outcome, new_tests=tests, message=summary[:4000], error_code=graded.error_code, finished_at=timezone.now()
    )
    result.refresh_from_db()
    return result


def recompute_progress(user_id: int, rung_id: int) -> Progress | None:
    """Progress from the recorded Submits alone (after a rejudge changed some)."""
    graded = Submission.objects.filter(user_id=user_id, rung_id=rung_id, kind=Kind.SUBMIT, status=Status.DONE).exclude(outcome=Outcome.INFRA_ERROR)
    outcomes = list(graded.values_list("outcome", flat=True))
    if not outcomes:
        Progress.objects.filter(user_id=user_id, rung_id=rung_id).delete()
        return None
    progress, _ = Progress.objects.select_for_update().get_or_create(user_id=user_id, rung_id=rung_id)
    progress.attempts = len(outcomes)
    progress.best_outcome = max(outcomes, key=lambda outcome: OUTCOME_RANK[Outcome(outcome)])
    progress.solved_at = graded.filter(outcome=Outcome.PASSED).aggregate(first=Min("finished_at"))["first"]
    progress.save()
    return progress


def rejudge_state(rejudge: Rejudge) -> dict[str, Any]:
    results = list(rejudge.results.select_related("submission__user", "submission__rung", "old_version", "new_version"))
    done = [result for result in results if result.status == Status.DONE]
    return {
        "results": results,
        "total": len(results),
        "done": len(done),
        "finished": len(done) == len(results),
        "changed": [result for result in done if result.changed],
    }


@transaction.atomic
def apply_rejudge(rejudge: Rejudge, user: Any) -> int:
    """Record the new grade on every submission whose outcome changed; the old one stays on the result row.

    A grader-side failure (infra_error) is never applied. Returns how many
    submissions changed.
    """
    rejudge = Rejudge.objects.select_for_update().get(pk=rejudge.pk)
    if rejudge.applied_at is not None:
        return 0
    if rejudge.results.exclude(status=Status.DONE).exists():
        raise ValueError("the rejudge has not finished")
    changed = 0
    touched: set[tuple[int, int]] = set()
    for result in rejudge.results.select_related("submission", "new_version").filter(applied=False):
        if not result.changed or result.new_outcome == Outcome.INFRA_ERROR:
            continue
        submission = result.submission
        Submission.objects.filter(pk=submission.pk).update(
            outcome=result.new_outcome, rung_version=result.new_version, message=result.message, error_code=result.error_code
        )
        submission.test_results.all().delete()
        SubmissionTestResult.objects.bulk_create(
            SubmissionTestResult(
                submission=submission, order=order, name=test["name"][:200], outcome=test["outcome"], message=test["message"],
                detail=test.get("detail", ""), hidden=submission.kind == Kind.SUBMIT,
            )
            for order, test in enumerate(result.new_tests)
        )
        RejudgeResult.objects.filter(pk=result.pk).update(applied=True)
        changed += 1
        if submission.kind == Kind.SUBMIT:
            touched.add((submission.user_id, submission.rung_id))
    for user_id, rung_id in touched:
        recompute_progress(user_id, rung_id)
    Rejudge.objects.filter(pk=rejudge.pk).update(applied_at=timezone.now(), applied_by=user)
    return changed
