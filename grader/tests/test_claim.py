from __future__ import annotations

import pytest

from exercises.models import Rung
from grader import lifecycle, services
from grader.constants import Kind, Outcome, Status
from grader.models import Submission
from sandbox import errors
from sandbox.jobs import CaseResult
from sandbox.testing import FakeRunner, job_result

# Also run in `make test`'s SQLite pass (the embedded default).
pytestmark = pytest.mark.sqlite_pass


@pytest.fixture
def queued(catalog, learner, django_capture_on_commit_callbacks) -> Submission:
    rung = Rung.objects.get(slug="kv-cache-size")
    with django_capture_on_commit_callbacks(execute=False):
        return services.submit_solution(user=learner, rung=rung, kind=Kind.RUN, code="x = 1\n")


def test_a_redelivered_task_for_a_claimed_submission_changes_nothing(queued):
    runner = FakeRunner()
    services.grade_submission(queued.pk, runner=runner)
    queued.refresh_from_db()
    finished = (queued.status, queued.outcome, queued.finished_at, queued.attempts)

    assert services.grade_submission(queued.pk, runner=runner) is None

    queued.refresh_from_db()
    assert len(runner.jobs) == 1
    assert (queued.status, queued.outcome, queued.finished_at, queued.attempts) == finished
    assert finished[0] == Status.DONE and finished[1] == Outcome.PASSED


def test_a_running_submission_cannot_be_claimed_twice(queued):
    assert lifecycle.claim(lifecycle.SUBMISSIONS, queued.pk) is not None
    assert lifecycle.claim(lifecycle.SUBMISSIONS, queued.pk) is None


def test_a_worker_that_lost_its_claim_writes_nothing(queued):
    first = lifecycle.claim(lifecycle.SUBMISSIONS, queued.pk, "worker-a")
    assert first is not None
    # The reaper gave the job to another worker, which claimed it again.
    Submission.objects.filter(pk=queued.pk).update(status=Status.QUEUED)
    second = lifecycle.claim(lifecycle.SUBMISSIONS, queued.pk, "worker-b")
    assert second is not None

    assert services.record_results(queued, job_result("failed"), first) is False
    assert lifecycle.requeue(first) is False
    queued.refresh_from_db()
    assert (queued.status, queued.outcome, queued.test_results.count()) == (Status.RUNNING, "", 0)

    assert services.record_results(queued, job_result("passed"), second) is True
    queued.refresh_from_db()
    assert (queued.status, queued.outcome) == (Status.DONE, Outcome.PASSED)


def test_a_missing_submission_is_tolerated(db):
    assert services.grade_submission(10**9, runner=FakeRunner()) is None


def test_the_task_is_enqueued_only_after_commit(catalog, learner, django_capture_on_commit_callbacks, enqueued):
    rung = Rung.objects.get(slug="kv-cache-size")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        submission = services.submit_solution(user=learner, rung=rung, kind=Kind.SUBMIT, code="x = 1\n")
        assert enqueued == []
    assert len(callbacks) == 1
    assert enqueued == [("submission", submission.pk, "submit")]


def test_an_infra_error_is_retried_and_not_counted(queued, settings):
    settings.GRADER_MAX_ATTEMPTS = 2
    runner = FakeRunner(job_result("infra_error", error_code=errors.DOCKER_UNAVAILABLE, message="no docker"))
    with pytest.raises(services.RetryLater):
        services.grade_submission(queued.pk, runner=runner)
    queued.refresh_from_db()
    assert queued.status == Status.QUEUED
    assert queued.message == "The grader is unavailable. Retrying."
    services.grade_submission(queued.pk, runner=runner)
    queued.refresh_from_db()
    assert queued.status == Status.DONE
    assert queued.outcome == Outcome.INFRA_ERROR
    # The last try says what happened, and no longer that it is retrying.
    assert queued.message == "The grader is unavailable."
    assert queued.user.progress.count() == 0


def test_a_pass_its_own_tests_do_not_bear_out_is_ours_not_retried_and_never_a_solve(catalog, learner):
    rung = Rung.objects.get(slug="kv-cache-size")
    submission = services.submit_solution(user=learner, rung=rung, kind=Kind.SUBMIT, code="x = 1\n")
    # A report that says passed for one test of the twenty the hidden file plans.
    runner = FakeRunner(job_result("passed", [CaseResult(name="test_anything", outcome="passed")]))
    services.grade_submission(submission.pk, runner=runner)
    submission.refresh_from_db()
    assert (submission.status, submission.outcome, submission.error_code) == (Status.DONE, Outcome.INFRA_ERROR, errors.REPORT_CONTRADICTED)
    assert (submission.attempts, len(runner.jobs)) == (1, 1)
    assert submission.message == "The grader's report did not agree with the tests it ran; the team has been told. Please try again later."
    assert learner.progress.count() == 0


def test_a_broken_exercise_is_not_retried(queued):
    runner = FakeRunner(job_result("infra_error", error_code=errors.REPORT_INFRA, message="fixture error"))
    services.grade_submission(queued.pk, runner=runner)
    queued.refresh_from_db()
    assert (queued.status, queued.outcome, queued.attempts, len(runner.jobs)) == (Status.DONE, Outcome.INFRA_ERROR, 1, 1)
    assert queued.message == "The exercise's tests could not run; the instructors have been told."
