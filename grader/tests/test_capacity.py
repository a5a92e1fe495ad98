"""The queue bound and the waits quoted follow the grading rate measured from finished jobs."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core.types import User
from exercises.models import Rung
from grader import services
from grader.capacity import measure_capacity
from grader.constants import Kind, Status
from grader.exceptions import GraderBusy
from grader.models import Submission


@pytest.fixture(autouse=True)
def _settings(settings, enqueued):
    settings.GRADER_MAX_QUEUED = 0
    settings.GRADER_MAX_WAIT_S = 8
    settings.GRADER_SECONDS_PER_JOB_ESTIMATE = 4.0
    settings.GRADER_WORKER_SLOTS = 2


def _finished_jobs(user, rung, seconds: float, count: int) -> None:
    now = timezone.now()
    for n in range(count):
        row = Submission.objects.create(user=user, rung=rung, rung_version=rung.current_version, kind=Kind.RUN, code=f"a = {n}\n")
        Submission.objects.filter(pk=row.pk).update(
            status=Status.DONE, outcome="passed", started_at=now - timedelta(seconds=seconds), finished_at=now
        )


def _users(django_user_model, count: int) -> list[User]:
    return [django_user_model.objects.create_user(username=f"c{n}", password="a-long-password-1") for n in range(count)]


def test_without_measurements_the_estimate_sizes_the_queue(catalog):
    capacity = measure_capacity()
    assert not capacity.measured and capacity.seconds_per_job == 4.0
    assert capacity.queue_bound() == 4  # 8 s x 2 slots / 4 s a job


def test_fast_grading_admits_more_and_quotes_shorter_waits(catalog, learner):
    rung = Rung.objects.get(slug="kv-cache-size")
    _finished_jobs(learner, rung, seconds=0.5, count=10)
    capacity = measure_capacity()
    assert capacity.measured and capacity.seconds_per_job == pytest.approx(0.5)
    assert capacity.queue_bound() == 32  # 8 s x 2 slots / 0.5 s
    assert capacity.seconds_to_grade(32) == 8


def test_a_slow_machine_bounds_the_queue_tighter_and_says_so(catalog, learner, django_user_model):
    rung = Rung.objects.get(slug="kv-cache-size")
    _finished_jobs(learner, rung, seconds=8.0, count=10)
    assert measure_capacity().queue_bound() == 2
    for user in _users(django_user_model, 2):
        services.submit_solution(user=user, rung=rung, kind=Kind.SUBMIT, code="a = 1\n")
    late = django_user_model.objects.create_user(username="late", password="a-long-password-1")
    with pytest.raises(GraderBusy) as excinfo:
        services.submit_solution(user=late, rung=rung, kind=Kind.SUBMIT, code="a = 1\n")
    # Two queued jobs over two slots at the measured 8 s a job.
    assert excinfo.value.retry_after_s == 8
    assert Submission.objects.filter(status=Status.QUEUED).count() == 2


def test_old_jobs_do_not_count(catalog, learner):
    rung = Rung.objects.get(slug="kv-cache-size")
    _finished_jobs(learner, rung, seconds=0.5, count=10)
    Submission.objects.update(finished_at=timezone.now() - timedelta(hours=1))
    assert not measure_capacity().measured
