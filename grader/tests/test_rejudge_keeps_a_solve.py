"""A rejudge may change an attempt's grade, visibly, but a solve stands (issue 18).

A learner who passed has read the reference; a rejudge against a stricter
version records the new outcome on the attempt and says so, but the rung
stays solved and the reference stays unlocked. A rejudge that now passes an
attempt solves the rung.
"""

from __future__ import annotations

from typing import Any

from exercises.models import Rung
from grader import rejudge, services
from grader.constants import Kind, Outcome
from grader.models import Progress, Rejudge, RejudgeResult, Submission
from sandbox.testing import FakeRunner, job_result


def _graded_submit(user: Any, rung: Rung, outcome: str) -> Submission:
    submission = services.submit_solution(user=user, rung=rung, kind=Kind.SUBMIT, code="x = 1\n")
    services.grade_submission(submission.pk, runner=FakeRunner(job_result(outcome)))
    return Submission.objects.get(pk=submission.pk)


def _rejudge_to(submission: Submission, outcome: str, admin: Any) -> Rejudge:
    batch = rejudge.start_rejudge([submission], target=Rejudge.Target.CURRENT, user=admin)
    rejudge.rejudge_one(batch.results.get().pk, runner=FakeRunner(job_result(outcome)))
    return batch


def test_a_rejudge_that_fails_a_passing_submit_keeps_the_rung_solved_and_the_reference_open(catalog, learner, admin_user, enqueued):
    rung = Rung.objects.get(slug="kv-cache-size")
    passed = _graded_submit(learner, rung, Outcome.PASSED)
    solved_at = Progress.objects.get(user=learner, rung=rung).solved_at
    assert solved_at is not None

    assert rejudge.apply_rejudge(_rejudge_to(passed, Outcome.FAILED, admin_user), admin_user) == 1

    passed.refresh_from_db()
    assert passed.outcome == Outcome.FAILED, "the attempt shows its new grade"
    progress = Progress.objects.get(user=learner, rung=rung)
    assert progress.solved_at == solved_at and progress.best_outcome == Outcome.PASSED
    assert services.has_solved(learner, rung) and services.can_see_reference(learner, rung)
    regrade = rejudge.regrades_by_rung(learner.pk, [rung.pk])[rung.pk]
    assert (regrade.old_outcome, regrade.new_outcome) == (Outcome.PASSED, Outcome.FAILED)
    assert rejudge.latest_regrades([passed.pk])[passed.pk].pk == regrade.pk


def test_a_rejudge_that_passes_a_failed_submit_solves_the_rung(catalog, learner, admin_user, enqueued):
    rung = Rung.objects.get(slug="kv-cache-size")
    failed = _graded_submit(learner, rung, Outcome.FAILED)
    assert not services.has_solved(learner, rung)

    assert rejudge.apply_rejudge(_rejudge_to(failed, Outcome.PASSED, admin_user), admin_user) == 1

    progress = Progress.objects.get(user=learner, rung=rung)
    assert progress.solved_at is not None and progress.best_outcome == Outcome.PASSED and progress.attempts == 1


def test_a_rejudge_never_overwrites_a_grade_that_changed_after_it_was_read(catalog, learner, admin_user, enqueued):
    rung = Rung.objects.get(slug="kv-cache-size")
    failed = _graded_submit(learner, rung, Outcome.FAILED)
    first = _rejudge_to(failed, Outcome.PASSED, admin_user)
    second = _rejudge_to(failed, Outcome.ERROR, admin_user)
    assert rejudge.apply_rejudge(first, admin_user) == 1

    # The second batch read "failed"; the submission is "passed" now: left alone.
    assert rejudge.apply_rejudge(second, admin_user) == 0
    failed.refresh_from_db()
    assert failed.outcome == Outcome.PASSED
    assert RejudgeResult.objects.get(rejudge=second).applied is False
    second.refresh_from_db()
    assert second.applied_at is not None


def test_a_submit_its_learner_cancelled_is_left_out_of_a_rejudge(catalog, learner, admin_user, enqueued):
    rung = Rung.objects.get(slug="kv-cache-size")
    cancelled = services.submit_solution(user=learner, rung=rung, kind=Kind.SUBMIT, code="x = 1\n")
    services.cancel_submission(cancelled)
    failed = _graded_submit(learner, rung, Outcome.FAILED)
    batch = rejudge.start_rejudge(Submission.objects.filter(pk__in=[cancelled.pk, failed.pk]), target=Rejudge.Target.CURRENT, user=admin_user)
    # Only the graded one: a cancelled job counts for nothing, and a regrade must not make it a solve.
    assert list(batch.results.values_list("submission_id", flat=True)) == [failed.pk]
    rejudge.rejudge_one(batch.results.get().pk, runner=FakeRunner(job_result(Outcome.FAILED)))
    rejudge.apply_rejudge(batch, admin_user)
    cancelled.refresh_from_db()
    assert cancelled.outcome == Outcome.CANCELLED and not services.has_solved(learner, rung)
