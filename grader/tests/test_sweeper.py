from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from exercises.models import Rung
from grader import services
from grader.constants import Kind, Outcome, Status
from grader.models import Submission
from grader.sweeper import sweep_stuck_submissions


@pytest.fixture
def sent(monkeypatch):
    calls: list[tuple[int, str]] = []
    monkeypatch.setattr(services, "enqueue_submission", lambda pk, queue: calls.append((pk, queue)))
    monkeypatch.setattr("grader.sweeper.enqueue_submission", lambda pk, queue: calls.append((pk, queue)))
    return calls


@pytest.fixture
def submission(catalog, learner, sent, django_capture_on_commit_callbacks) -> Submission:
    with django_capture_on_commit_callbacks(execute=True):
        created = services.submit_solution(user=learner, rung=Rung.objects.get(slug="kv-cache-size"), kind=Kind.SUBMIT, code="x = 1\n")
    sent.clear()
    return created


def test_it_requeues_a_submission_whose_message_was_lost(submission, sent, django_capture_on_commit_callbacks, settings):
    Submission.objects.filter(pk=submission.pk).update(enqueued_at=timezone.now() - timedelta(seconds=settings.GRADER_QUEUED_STALE_S + 5))
    with django_capture_on_commit_callbacks(execute=True):
        report = sweep_stuck_submissions()
    assert report.requeued == [submission.pk]
    assert sent == [(submission.pk, "submit")]


def test_it_leaves_a_fresh_queued_submission_alone(submission, sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        report = sweep_stuck_submissions()
    assert report.requeued == [] and sent == []


def test_it_puts_back_a_submission_whose_worker_died(submission, sent, django_capture_on_commit_callbacks, settings):
    assert services.claim_submission(submission.pk)
    Submission.objects.filter(pk=submission.pk).update(started_at=timezone.now() - timedelta(seconds=settings.GRADER_HARD_TIME_LIMIT_S + 60))
    with django_capture_on_commit_callbacks(execute=True):
        report = sweep_stuck_submissions()
    submission.refresh_from_db()
    assert report.reset == [submission.pk]
    assert submission.status == Status.QUEUED
    assert sent == [(submission.pk, "submit")]


def test_it_gives_up_after_the_attempt_cap_with_infra_error(submission, sent, settings):
    assert services.claim_submission(submission.pk)
    Submission.objects.filter(pk=submission.pk).update(
        attempts=settings.GRADER_MAX_ATTEMPTS, started_at=timezone.now() - timedelta(seconds=settings.GRADER_HARD_TIME_LIMIT_S + 60)
    )
    report = sweep_stuck_submissions()
    submission.refresh_from_db()
    assert report.abandoned == [submission.pk]
    assert (submission.status, submission.outcome, submission.error_code) == (Status.DONE, Outcome.INFRA_ERROR, "attempts_exhausted")
    assert submission.user.progress.count() == 0


def test_the_timeouts_nest_from_one_clock(settings):
    from sandbox.runner import GRACE_S, STARTUP_S

    longest_job = STARTUP_S + settings.SANDBOX_MAX_TIME_S * 2 + GRACE_S  # the runner's watchdog for a Submit
    assert longest_job < settings.GRADER_SOFT_TIME_LIMIT_S
    assert settings.GRADER_SOFT_TIME_LIMIT_S < settings.GRADER_HARD_TIME_LIMIT_S < settings.BROKER_VISIBILITY_TIMEOUT_S
    assert settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] == settings.BROKER_VISIBILITY_TIMEOUT_S


def test_a_rung_cannot_ask_for_more_time_than_the_clock_allows(settings):
    from types import SimpleNamespace

    from exercises.jobs import job_for

    content = SimpleNamespace(visible_tests="", hidden_tests="", limits={"time_s": 10_000}, gpu=False)
    assert job_for(content, "run", "").limits.time_s == settings.SANDBOX_MAX_TIME_S
