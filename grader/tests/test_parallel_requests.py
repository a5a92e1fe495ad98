"""A learner's parallel requests are counted one after another: the caps hold under a burst.

Real threads, each with its own PostgreSQL connection, released together by a
barrier. Before the learner's row was locked, eleven parallel Submits to
eleven rungs stored nine jobs against a cap of three.
"""

from __future__ import annotations

from typing import Any

import pytest

from exercises.models import Rung
from grader import services
from grader.constants import Kind, Status
from grader.exceptions import SubmissionRejected
from grader.models import Submission

pytestmark = pytest.mark.django_db(transaction=True)


def _refusals(answers: list[Any]) -> list[str]:
    return sorted(type(answer).__name__ for answer in answers if isinstance(answer, SubmissionRejected))


@pytest.fixture
def rungs(catalog: Any) -> list[Rung]:
    found = list(Rung.objects.filter(current_version__isnull=False).order_by("pk"))
    assert len(found) >= 8
    return found


def test_parallel_submits_to_many_rungs_keep_the_cap_on_jobs_in_flight(rungs, learner, settings, enqueued, all_at_once):
    settings.GRADER_MAX_JOBS_IN_FLIGHT = 3
    for _ in range(3):
        Submission.objects.all().delete()
        answers = all_at_once(len(rungs), lambda i: services.submit_solution(user=learner, rung=rungs[i], kind=Kind.SUBMIT, code="x = 1\n").pk)
        assert Submission.objects.filter(user=learner, status__in=[Status.QUEUED, Status.RUNNING]).count() == 3
        assert _refusals(answers) == ["TooManyJobsInFlight"] * (len(rungs) - 3), answers


def test_parallel_submits_keep_the_rate_limit(rungs, learner, settings, enqueued, all_at_once):
    settings.GRADER_MAX_JOBS_IN_FLIGHT = 100
    settings.GRADER_RATE_LIMIT_PER_MIN = 2
    all_at_once(len(rungs), lambda i: services.submit_solution(user=learner, rung=rungs[i], kind=Kind.SUBMIT, code="x = 1\n").pk)
    assert Submission.objects.filter(user=learner).count() == 2


def test_a_submit_racing_the_end_of_its_rungs_last_job_is_stored_not_a_500(rungs, learner, enqueued, monkeypatch, all_at_once):
    rung = rungs[0]
    first = services.submit_solution(user=learner, rung=rung, kind=Kind.SUBMIT, code="x = 1\n")
    real_create = Submission.objects.create
    calls = {"n": 0}

    def create_then_the_worker_finishes(**fields: Any) -> Submission:
        calls["n"] += 1
        try:
            return real_create(**fields)  # the unique index refuses it: a job is in flight
        finally:
            if calls["n"] == 1:
                # The worker's finish (its own connection) lands between the insert and the look after it.
                all_at_once(1, lambda _: Submission.objects.filter(pk=first.pk).update(status=Status.DONE, outcome="failed"))

    monkeypatch.setattr(Submission.objects, "create", create_then_the_worker_finishes)
    second = services.submit_solution(user=learner, rung=rung, kind=Kind.SUBMIT, code="x = 2\n")
    assert second.pk != first.pk and second.status == Status.QUEUED and calls["n"] == 2
