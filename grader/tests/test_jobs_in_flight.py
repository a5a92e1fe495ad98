"""A learner has a bounded number of jobs in flight across all rungs (issue 14.7)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from exercises.models import Rung
from grader import lifecycle, services
from grader.constants import Kind, Status
from grader.exceptions import TooManyJobsInFlight
from grader.models import Submission

# Also run in `make test`'s SQLite pass (the embedded default).
pytestmark = pytest.mark.sqlite_pass

SLUGS = ["kv-cache-size", "quantization-arithmetic", "continuous-batching"]


@pytest.fixture(autouse=True)
def _limit(settings, enqueued):
    settings.GRADER_MAX_JOBS_IN_FLIGHT = 2
    settings.GRADER_SECONDS_PER_JOB_ESTIMATE = 8.0
    settings.GRADER_WORKER_SLOTS = 2
    settings.GRADER_MAX_QUEUED = 100  # the queue bound is not under test here


def _send(user, slug: str, kind: str = Kind.SUBMIT) -> Submission:
    return services.submit_solution(user=user, rung=Rung.objects.get(slug=slug), kind=kind, code="x = 1\n")


def test_a_third_job_on_another_rung_is_refused_with_an_honest_wait(catalog, learner):
    _send(learner, SLUGS[0])
    _send(learner, SLUGS[1], Kind.RUN)
    with pytest.raises(TooManyJobsInFlight) as excinfo:
        _send(learner, SLUGS[2])
    # Nothing ahead of the learner's oldest job: it needs one job's time.
    assert excinfo.value.http_status == 429 and excinfo.value.retry_after_s == 8
    assert "waiting or running: 2, the most allowed at once: 2" in str(excinfo.value)
    assert Submission.objects.filter(user=learner).count() == 2


def test_the_wait_counts_the_jobs_ahead_and_the_one_running(catalog, learner, django_user_model):
    others = [django_user_model.objects.create_user(username=f"o{n}", password="a-long-password-1") for n in range(4)]
    for user in others:
        _send(user, SLUGS[0])
    _send(learner, SLUGS[0])
    _send(learner, SLUGS[1])
    with pytest.raises(TooManyJobsInFlight) as excinfo:
        _send(learner, SLUGS[2])
    assert excinfo.value.retry_after_s == (4 / 2 + 1) * 8  # four ahead over two slots, then its own

    mine = Submission.objects.filter(user=learner).order_by("pk").first()
    assert mine is not None and lifecycle.claim(lifecycle.SUBMISSIONS, mine.pk)
    Submission.objects.filter(pk=mine.pk).update(started_at=timezone.now() - timedelta(seconds=3))
    with pytest.raises(TooManyJobsInFlight) as excinfo:
        _send(learner, SLUGS[2])
    assert excinfo.value.retry_after_s == 5  # 8 s a job, running for 3


def test_a_finished_job_frees_a_slot(catalog, learner):
    first = _send(learner, SLUGS[0])
    _send(learner, SLUGS[1])
    Submission.objects.filter(pk=first.pk).update(status=Status.DONE, outcome="failed")
    assert _send(learner, SLUGS[2]).status == Status.QUEUED


def test_the_site_answers_429_with_retry_after(catalog, learner, client):
    _send(learner, SLUGS[0])
    _send(learner, SLUGS[1])
    client.force_login(learner)
    version = Rung.objects.get(slug=SLUGS[2]).current_version
    assert version is not None
    response = client.post(f"/rungs/{SLUGS[2]}/submit", {"code": "x = 1\n", "version": version.number})
    assert response.status_code == 429
    assert response["Retry-After"] == "8"
    assert "the most allowed at once: 2" in response.json()["error"]
