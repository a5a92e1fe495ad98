"""Cancel: a learner stops their own queued or running job; it ends as
cancelled, never counts as an attempt, and a worker that was running it
stops its container and records nothing (issue 18)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from exercises.models import Rung
from grader import lifecycle, services
from grader.constants import Kind, Outcome, Status
from grader.exceptions import NothingToCancel
from grader.models import Progress, Submission
from sandbox.jobs import Job, JobResult
from sandbox.testing import job_result


def _submit(user: Any, kind: str = Kind.SUBMIT) -> Submission:
    return services.submit_solution(user=user, rung=Rung.objects.get(slug="kv-cache-size"), kind=kind, code="while True:\n    pass\n")


def test_a_queued_job_cancelled_is_never_graded_and_counts_for_nothing(catalog, learner, client, enqueued):
    client.force_login(learner)
    submission = _submit(learner)
    response = client.post(f"/submissions/{submission.pk}/cancel")
    assert response.status_code == 200 and response.json()["cancelled"] is True
    submission.refresh_from_db()
    assert (submission.status, submission.outcome) == (Status.DONE, Outcome.CANCELLED)
    assert services.grade_submission(submission.pk) is None  # the worker finds nothing to claim
    assert not Progress.objects.filter(user=learner).exists()
    state = client.get(f"/submissions/{submission.pk}/state").json()
    assert state["outcome"] == "cancelled" and "does not count" in state["summary"]


def test_a_finished_job_cannot_be_cancelled(catalog, learner, client, enqueued):
    client.force_login(learner)
    submission = _submit(learner, Kind.RUN)
    services.grade_submission(submission.pk, runner=_Instant())
    response = client.post(f"/submissions/{submission.pk}/cancel")
    assert response.status_code == 409 and "nothing to cancel" in response.json()["error"]
    with pytest.raises(NothingToCancel):
        services.cancel_submission(submission)


def test_only_the_learner_who_sent_it_can_cancel_it(catalog, learner, other_learner, client, enqueued):
    client.force_login(other_learner)
    submission = _submit(learner)
    assert client.post(f"/submissions/{submission.pk}/cancel").status_code == 404
    assert client.get(f"/submissions/{submission.pk}/cancel").status_code in (404, 405)
    submission.refresh_from_db()
    assert submission.status == Status.QUEUED


class _Instant:
    def run(self, job: Job, on_event: Any = None) -> JobResult:
        return job_result("failed")

    def stop(self, container_id: str) -> None:
        raise AssertionError("nothing to stop")


class _LoopsUntilStopped:
    """A runner whose job runs until ``stop`` kills its container, as a real infinite loop does."""

    def __init__(self) -> None:
        self.killed = threading.Event()
        self.started = threading.Event()
        self.stopped: list[str] = []

    def run(self, job: Job, on_event: Any = None) -> JobResult:
        on_event("container", {"id": "looping-1"})
        on_event("running", {})
        self.started.set()
        if not self.killed.wait(30):
            raise AssertionError("the container was never stopped")
        return job_result("infra_error", error_code="report_missing", message="no report")

    def stop(self, container_id: str) -> None:
        self.stopped.append(container_id)
        self.killed.set()


@pytest.mark.django_db(transaction=True)
def test_a_running_job_cancelled_has_its_container_stopped_and_its_result_dropped(catalog, learner, enqueued, settings):
    settings.GRADER_CANCEL_POLL_S = 0.1
    submission = _submit(learner)
    runner = _LoopsUntilStopped()
    graded: list[Any] = []
    worker = threading.Thread(target=lambda: graded.append(services.grade_submission(submission.pk, runner=runner)))
    worker.start()
    assert runner.started.wait(30)
    began = time.monotonic()
    services.cancel_submission(Submission.objects.get(pk=submission.pk))
    worker.join(30)
    assert runner.stopped == ["looping-1"] and time.monotonic() - began < 10
    assert graded == [None]
    submission.refresh_from_db()
    assert (submission.status, submission.outcome, submission.error_code) == (Status.DONE, Outcome.CANCELLED, "")
    assert not lifecycle.cancel(lifecycle.SUBMISSIONS, submission.pk)
    assert not Progress.objects.filter(user=learner).exists()
