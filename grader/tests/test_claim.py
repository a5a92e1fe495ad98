from __future__ import annotations

from typing import Any

import pytest

from exercises.models import Rung
from grader import services
from grader.constants import Kind, Outcome, Status
from grader.models import Submission
from sandbox.jobs import CaseResult, Job, JobResult


class RecordingRunner:
    """Stands in for Docker where the test is about claiming, not sandboxing."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []

    def run(self, job: Job, on_event: Any = None) -> JobResult:
        self.jobs.append(job)
        return JobResult(outcome="passed", tests=[CaseResult(name="test_ok", outcome="passed")], timings={"total_s": 0.1})


@pytest.fixture
def queued(catalog, learner, django_capture_on_commit_callbacks) -> Submission:
    rung = Rung.objects.get(slug="kv-cache-size")
    with django_capture_on_commit_callbacks(execute=False):
        return services.submit_solution(user=learner, rung=rung, kind=Kind.RUN, code="x = 1\n")


def test_a_redelivered_task_for_a_claimed_submission_changes_nothing(queued):
    runner = RecordingRunner()
    services.grade_submission(queued.pk, runner=runner)  # type: ignore[arg-type]
    queued.refresh_from_db()
    finished = (queued.status, queued.outcome, queued.finished_at, queued.attempts)

    assert services.grade_submission(queued.pk, runner=runner) is None  # type: ignore[arg-type]

    queued.refresh_from_db()
    assert len(runner.jobs) == 1
    assert (queued.status, queued.outcome, queued.finished_at, queued.attempts) == finished
    assert finished[0] == Status.DONE and finished[1] == Outcome.PASSED


def test_a_running_submission_cannot_be_claimed_twice(queued):
    assert services.claim_submission(queued.pk) is True
    assert services.claim_submission(queued.pk) is False


def test_a_missing_submission_is_tolerated(db):
    assert services.grade_submission(10**9, runner=RecordingRunner()) is None  # type: ignore[arg-type]


def test_the_task_is_enqueued_only_after_commit(catalog, learner, django_capture_on_commit_callbacks, monkeypatch):
    sent: list[tuple[int, str]] = []
    monkeypatch.setattr(services, "enqueue_submission", lambda pk, queue: sent.append((pk, queue)))
    rung = Rung.objects.get(slug="kv-cache-size")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        submission = services.submit_solution(user=learner, rung=rung, kind=Kind.SUBMIT, code="x = 1\n")
        assert sent == []
    assert len(callbacks) == 1
    assert sent == [(submission.pk, "submit")]


def test_an_infra_error_is_retried_and_not_counted(queued, settings):
    class BrokenRunner(RecordingRunner):
        def run(self, job: Job, on_event: Any = None) -> JobResult:
            self.jobs.append(job)
            return JobResult(outcome="infra_error", error_code="docker_unavailable", message="no docker")

    settings.GRADER_MAX_ATTEMPTS = 2
    runner = BrokenRunner()
    with pytest.raises(services.RetryLater):
        services.grade_submission(queued.pk, runner=runner)  # type: ignore[arg-type]
    queued.refresh_from_db()
    assert queued.status == Status.QUEUED
    services.grade_submission(queued.pk, runner=runner)  # type: ignore[arg-type]
    queued.refresh_from_db()
    assert queued.status == Status.DONE
    assert queued.outcome == Outcome.INFRA_ERROR
    assert queued.user.progress.count() == 0
