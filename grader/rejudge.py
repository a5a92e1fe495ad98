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
from django.db.models import Count, F, JSONField, Min, Q, TextField
from django.utils import timezone

from core.runners import default_runner
from core.types import User
from exercises.models import RungVersion
from sandbox.interface import Runner

from . import lifecycle, results, signals, tallies
from .constants import OUTCOME_RANK, Kind, Outcome, Status
from .models import Progress, Rejudge, RejudgeResult, Submission
from .retention import stored_tests
from .services import build_job

log = logging.getLogger(__name__)


def _tests_of(submission: Submission) -> list[dict[str, Any]]:
    return [
        results.ShownTest(row.name, row.outcome, row.duration_s, row.message, row.detail, row.hidden).as_dict()
        for row in stored_tests(submission)
    ]


@transaction.atomic
def start_rejudge(submissions: Iterable[Submission], *, target: str, user: User, note: str = "") -> Rejudge:
    """Queue a regrade of each finished submission against ``target`` (current or original version).

    A job its learner cancelled is left out: it counts for nothing, so a
    regrade must not turn it into an attempt, or a solve.
    """
    rejudge = Rejudge.objects.create(created_by=user, target=target, note=note[:300])
    for submission in submissions:
        if submission.status != Status.DONE or submission.outcome == Outcome.CANCELLED:
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
        lifecycle.enqueue_on_commit(lifecycle.REJUDGES, result.pk, lifecycle.queue_for(version, submission.kind))
    return rejudge


def rejudge_one(result_id: int, *, runner: Runner | None = None, worker: str = "") -> RejudgeResult | None:
    """Claim one queued result, grade its submission's code (with its own seed), store the grade on the result only.

    None when there was nothing to claim (a redelivered task) or the claim was lost.
    """
    claim = lifecycle.claim(lifecycle.REJUDGES, result_id, worker)
    if claim is None:
        return None
    result = RejudgeResult.objects.select_related("submission", "new_version").get(pk=result_id)
    submission, version = result.submission, result.new_version
    graded = results.present((runner or default_runner()).run(build_job(submission, version)), kind=submission.kind, version=version)
    with transaction.atomic():
        if not lifecycle.finish(
            claim, new_outcome=graded.outcome, new_tests=[test.as_dict() for test in graded.tests], message=graded.message[:4000],
            error_code=graded.error_code,
        ):
            return None
    result.refresh_from_db()
    return result

def recompute_progress(user_id: int, rung_id: int) -> Progress | None:
    """Progress from the recorded Submits alone (after a rejudge changed some).

    NOTE: a solve stands. A learner who passed has read the reference
    solution; a rejudge that now fails their code (a hidden test was
    tightened) is shown on the attempt and the module page ("regraded
    against version N"), but it never takes ``solved_at`` back, so the rung
    stays solved and the reference stays unlocked. A rejudge that now passes
    an attempt solves the rung, dated when that attempt was submitted. Both writes are
    conditional UPDATEs on the row as read.
    """
    graded = Submission.objects.filter(user_id=user_id, rung_id=rung_id, kind=Kind.SUBMIT, status=Status.DONE).exclude(
        outcome__in=[Outcome.INFRA_ERROR, Outcome.CANCELLED]
    )
    outcomes = list(graded.values_list("outcome", flat=True))
    progress, _ = Progress.objects.select_for_update().get_or_create(user_id=user_id, rung_id=rung_id)
    if not outcomes and progress.solved_at is None:
        Progress.objects.filter(pk=progress.pk, solved_at__isnull=True).delete()
        return None
    attempts = len(outcomes)
    first_pass = graded.filter(outcome=Outcome.PASSED).aggregate(first=Min("enqueued_at"))["first"]
    if progress.solved_at is not None:
        outcomes.append(Outcome.PASSED)  # the solve stands
    best = max(outcomes, key=lambda outcome: OUTCOME_RANK[Outcome(outcome)])
    updated = Progress.objects.filter(pk=progress.pk, solved_at=progress.solved_at).update(
        attempts=attempts, best_outcome=best, solved_at=progress.solved_at or first_pass, updated_at=timezone.now()
    )
    if updated != 1:
        raise RuntimeError(f"progress {progress.pk} changed while it was locked")
    progress.refresh_from_db()
    return progress


def latest_regrades(submission_ids: Iterable[int]) -> dict[int, RejudgeResult]:
    """For each submission a rejudge changed, the last applied result (old and new outcome, new version)."""
    latest: dict[int, RejudgeResult] = {}
    applied = RejudgeResult.objects.filter(submission_id__in=list(submission_ids), applied=True).select_related("new_version", "rejudge")
    for result in applied.order_by("rejudge__applied_at", "pk"):
        latest[result.submission_id] = result
    return latest


def regrades_by_rung(user_id: int, rung_ids: Iterable[int]) -> dict[int, RejudgeResult]:
    """For each rung, the learner's most recent Submit whose grade a rejudge changed."""
    latest: dict[int, RejudgeResult] = {}
    applied = RejudgeResult.objects.filter(
        submission__user_id=user_id, submission__rung_id__in=list(rung_ids), submission__kind=Kind.SUBMIT, applied=True
    ).select_related("new_version", "rejudge", "submission")
    for result in applied.order_by("rejudge__applied_at", "pk"):
        latest[result.submission.rung_id] = result
    return latest


# The preview lists this many results at most, the changed ones first: a
# rung's rejudge may regrade 100,000 submissions, and rendering them all
# took over a minute (bench/scale.py); the counts are always whole.
REJUDGE_ROWS_SHOWN = 200


def without_version_texts(*relations: str) -> list[str]:
    """The RungVersion text and JSON fields (instructions, code, tests: tens of KiB) under each relation, for ``defer``:
    a list naming a row's version needs its number and rung, and 200 rows read 200 versions whole."""
    heavy = [field.name for field in RungVersion._meta.concrete_fields if isinstance(field, TextField | JSONField)]
    return [f"{relation}__{name}" for relation in relations for name in heavy]


def rejudge_state(rejudge: Rejudge) -> dict[str, Any]:
    """The counts of the preview (total, graded again, would change), and up to REJUDGE_ROWS_SHOWN results to list."""
    rows = (rejudge.results.select_related("submission__user", "submission__rung", "old_version", "new_version")
            .defer("submission__code", "submission__stdout", "submission__stderr", *without_version_texts("old_version", "new_version")))
    would_change = Q(status=Status.DONE) & ~Q(new_outcome=F("old_outcome"))
    counts = rejudge.results.aggregate(total=Count("pk"), done=Count("pk", filter=Q(status=Status.DONE)), changed=Count("pk", filter=would_change))
    changed = list(rows.filter(would_change).order_by("pk")[:REJUDGE_ROWS_SHOWN])
    others = list(rows.exclude(would_change).order_by("pk")[: REJUDGE_ROWS_SHOWN - len(changed)]) if len(changed) < REJUDGE_ROWS_SHOWN else []
    return {
        "results": changed + others,
        "total": counts["total"],
        "done": counts["done"],
        "finished": counts["done"] == counts["total"],
        "changed": changed,
        "changed_count": counts["changed"],
    }


@transaction.atomic
def apply_rejudge(rejudge: Rejudge, user: User) -> int:
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
        # Only onto the grade the rejudge read: a submission regraded since
        # (another rejudge applied first) keeps its newer grade.
        as_read = Submission.objects.filter(pk=submission.pk, status=Status.DONE, outcome=result.old_outcome, rung_version=result.old_version_id)
        if not as_read.select_for_update().exists():
            log.warning("rejudge %s: submission %s changed since it was regraded; left as it is", rejudge.pk, submission.pk)
            continue
        tallies.withdraw_submission(submission.pk)  # the old grade, while the row is locked
        moved = as_read.update(outcome=result.new_outcome, rung_version=result.new_version, message=result.message, error_code=result.error_code)
        if moved != 1:
            raise RuntimeError(f"submission {submission.pk} changed while it was locked")
        if RejudgeResult.objects.filter(pk=result.pk, applied=False).update(applied=True) != 1:
            raise RuntimeError(f"rejudge result {result.pk} was applied twice")
        results.write_test_rows(submission, results.shown_tests_from_dicts(result.new_tests, hidden=submission.kind == Kind.SUBMIT))
        tallies.count_submission(submission.pk, learner=False)
        changed += 1
        if submission.kind == Kind.SUBMIT:
            touched.add((submission.user_id, submission.rung_id))
            if result.new_outcome == Outcome.PASSED:
                signals.announce_submit_passed_on_commit(submission.pk, submission.user_id, submission.rung_id)
    for user_id, rung_id in touched:
        recompute_progress(user_id, rung_id)
        tallies.recount_learner(user_id, rung_id)
    if Rejudge.objects.filter(pk=rejudge.pk, applied_at__isnull=True).update(applied_at=timezone.now(), applied_by=user) != 1:
        raise RuntimeError(f"rejudge {rejudge.pk} was applied twice")
    return changed
