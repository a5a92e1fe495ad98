"""A waiting page is told when to ask again: seldom far back in a queue, soon near the start."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from exercises.models import Rung
from grader.capacity import Capacity, forget_recent_capacity, recent_capacity
from grader.constants import Kind, Status
from grader.models import Submission
from grader.pacing import MAX_POLL_S, MAX_RUNNING_POLL_S, MIN_POLL_S, next_poll_s

# 0.6 s a job on each of two slots: 200 jobs a minute.
CAPACITY = Capacity(seconds_per_job=0.6, slots=2, measured=True)


@pytest.mark.parametrize(
    ("ahead", "expected"),
    [(0, MIN_POLL_S), (4, MIN_POLL_S), (6, 0.9), (10, 1.5), (30, 4.5), (39, MAX_POLL_S), (399, MAX_POLL_S)],
)
def test_a_queued_job_is_asked_about_at_half_its_expected_wait(ahead, expected):
    # Ten jobs ahead on two slots at 0.6 s is 3 s; ask again at 1.5 s.
    assert next_poll_s(status=Status.QUEUED, jobs_ahead=ahead, running_for_s=None, capacity=CAPACITY) == expected


def test_a_mixed_queue_drains_at_the_mean_not_the_median():
    # Mostly quick Runs (median 0.1 s) and some 1.5 s Submits (mean 0.5 s):
    # twenty jobs ahead take about 5 s, not 1 s.
    mixed = Capacity(seconds_per_job=0.1, slots=2, measured=True, mean_seconds_per_job=0.5)
    assert next_poll_s(status=Status.QUEUED, jobs_ahead=20, running_for_s=None, capacity=mixed) == 2.5


@pytest.mark.parametrize(
    ("running_for", "expected"),
    [(0.0, MIN_POLL_S), (0.5, MIN_POLL_S), (30.0, MIN_POLL_S)],
)
def test_a_running_job_is_asked_about_soon(running_for, expected):
    assert next_poll_s(status=Status.RUNNING, jobs_ahead=None, running_for_s=running_for, capacity=CAPACITY) == expected


def test_a_slow_rung_running_is_still_asked_about_every_two_seconds():
    slow = Capacity(seconds_per_job=20.0, slots=2, measured=True)
    assert next_poll_s(status=Status.RUNNING, jobs_ahead=None, running_for_s=1.0, capacity=slow) == MAX_RUNNING_POLL_S
    assert next_poll_s(status=Status.RUNNING, jobs_ahead=None, running_for_s=18.0, capacity=slow) == 1.0


def test_a_finished_job_is_not_asked_about():
    assert next_poll_s(status=Status.DONE, jobs_ahead=None, running_for_s=None, capacity=CAPACITY) is None


def test_the_remembered_capacity_follows_the_measurement_after_it_is_forgotten(catalog, learner, settings):
    settings.GRADER_SECONDS_PER_JOB_ESTIMATE = 3.0
    forget_recent_capacity()
    assert recent_capacity().seconds_per_job == 3.0
    settings.GRADER_SECONDS_PER_JOB_ESTIMATE = 7.0
    assert recent_capacity().seconds_per_job == 3.0, "measured again within its two seconds"
    forget_recent_capacity()
    assert recent_capacity().seconds_per_job == 7.0


def test_the_state_carries_the_hint_until_the_job_is_done(catalog, learner, django_user_model, client, settings):
    settings.GRADER_SECONDS_PER_JOB_ESTIMATE = 1.0
    settings.GRADER_WORKER_SLOTS = 2
    forget_recent_capacity()
    rung = Rung.objects.select_related("current_version").get(slug="kv-cache-size")
    version = rung.current_version
    assert version is not None
    others = django_user_model.objects.bulk_create(django_user_model(username=f"q{n}") for n in range(20))
    Submission.objects.bulk_create(
        Submission(user=other, rung=rung, rung_version=version, kind=Kind.RUN, code="x = 1\n") for other in others
    )
    submits = Rung.objects.exclude(pk=rung.pk).select_related("current_version")[:4]
    Submission.objects.bulk_create(
        Submission(user=learner, rung=other_rung, rung_version=other_rung.current_version, kind=Kind.SUBMIT, code="x = 3\n") for other_rung in submits
    )
    mine = Submission.objects.create(user=learner, rung=rung, rung_version=version, kind=Kind.RUN, code="x = 2\n")
    client.force_login(learner)
    state = client.get(f"/submissions/{mine.pk}/state").json()
    # The position counts the Runs ahead; the pacing every job ahead: 24 on
    # two slots at the 1 s estimate is 12 s to its start, asked again in 5 s.
    assert (state["queue_position"], state["poll_after_ms"]) == (21, 5000)
    Submission.objects.exclude(pk=mine.pk).filter(kind=Kind.RUN).delete()
    state = client.get(f"/submissions/{mine.pk}/state").json()
    # Four Submits ahead: 2 s to its start, asked again in 1 s.
    assert (state["queue_position"], state["poll_after_ms"]) == (1, 1000)
    Submission.objects.exclude(pk=mine.pk).delete()

    Submission.objects.filter(pk=mine.pk).update(status=Status.RUNNING, started_at=timezone.now() - timedelta(seconds=0.2))
    assert client.get(f"/submissions/{mine.pk}/state").json()["poll_after_ms"] == 700

    Submission.objects.filter(pk=mine.pk).update(status=Status.DONE, outcome="failed", finished_at=timezone.now())
    assert "poll_after_ms" not in client.get(f"/submissions/{mine.pk}/state").json()
