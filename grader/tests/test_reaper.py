"""The reaper: every type of claimed job stuck in queued or running is recovered."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from exercises.models import Rung
from grader import lifecycle, rejudge, services
from grader.constants import Kind, Outcome, Status
from grader.models import Rejudge, RejudgeResult, Submission
from sandbox.testing import FakeRunner


def _long_ago(settings) -> object:
    return timezone.now() - timedelta(seconds=settings.GRADER_HARD_TIME_LIMIT_S + 60)


@pytest.fixture
def submission(catalog, learner, enqueued, django_capture_on_commit_callbacks) -> Submission:
    with django_capture_on_commit_callbacks(execute=True):
        created = services.submit_solution(user=learner, rung=Rung.objects.get(slug="kv-cache-size"), kind=Kind.SUBMIT, code="x = 1\n")
    enqueued.clear()
    return created


@pytest.fixture
def rejudged(submission, admin_user, enqueued, django_capture_on_commit_callbacks) -> RejudgeResult:
    services.grade_submission(submission.pk, runner=FakeRunner())
    with django_capture_on_commit_callbacks(execute=True):
        batch = rejudge.start_rejudge([Submission.objects.get(pk=submission.pk)], target=Rejudge.Target.ORIGINAL, user=admin_user)
    enqueued.clear()
    return batch.results.get()


def test_it_requeues_a_submission_whose_message_was_lost(submission, enqueued, django_capture_on_commit_callbacks, settings):
    Submission.objects.filter(pk=submission.pk).update(enqueued_at=timezone.now() - timedelta(seconds=settings.GRADER_QUEUED_STALE_S + 5))
    with django_capture_on_commit_callbacks(execute=True):
        report = lifecycle.reap()
    assert report.requeued == [("submission", submission.pk)]
    assert enqueued == [("submission", submission.pk, "submit")]


def test_it_leaves_a_fresh_queued_submission_alone(submission, enqueued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        report = lifecycle.reap()
    assert report.requeued == [] and enqueued == []


def test_it_puts_back_a_submission_whose_worker_died(submission, enqueued, django_capture_on_commit_callbacks, settings):
    assert lifecycle.claim(lifecycle.SUBMISSIONS, submission.pk)
    Submission.objects.filter(pk=submission.pk).update(started_at=_long_ago(settings))
    with django_capture_on_commit_callbacks(execute=True):
        report = lifecycle.reap()
    submission.refresh_from_db()
    assert report.reset == [("submission", submission.pk)]
    assert submission.status == Status.QUEUED
    assert enqueued == [("submission", submission.pk, "submit")]


def test_it_gives_up_after_the_attempt_cap_with_infra_error(submission, settings):
    assert lifecycle.claim(lifecycle.SUBMISSIONS, submission.pk)
    Submission.objects.filter(pk=submission.pk).update(attempts=settings.GRADER_MAX_ATTEMPTS, started_at=_long_ago(settings))
    report = lifecycle.reap()
    submission.refresh_from_db()
    assert report.abandoned == [("submission", submission.pk)]
    assert (submission.status, submission.outcome, submission.error_code) == (Status.DONE, Outcome.INFRA_ERROR, "attempts_exhausted")
    assert submission.user.progress.count() == 0


def test_it_puts_back_a_rejudge_whose_worker_died(rejudged, enqueued, django_capture_on_commit_callbacks, settings):
    assert lifecycle.claim(lifecycle.REJUDGES, rejudged.pk, "dead-worker")
    RejudgeResult.objects.filter(pk=rejudged.pk).update(started_at=_long_ago(settings))
    with django_capture_on_commit_callbacks(execute=True):
        report = lifecycle.reap()
    assert report.reset == [("rejudge", rejudged.pk)]
    assert enqueued == [("rejudge", rejudged.pk, "submit")]
    # The redelivered task can claim and finish it now.
    assert rejudge.rejudge_one(rejudged.pk, runner=FakeRunner()) is not None
    rejudged.refresh_from_db()
    assert (rejudged.status, rejudged.new_outcome, rejudged.attempts) == (Status.DONE, Outcome.PASSED, 2)


def test_a_rejudge_out_of_attempts_ends_as_infra_error_and_is_never_applied(rejudged, admin_user, settings):
    assert lifecycle.claim(lifecycle.REJUDGES, rejudged.pk)
    RejudgeResult.objects.filter(pk=rejudged.pk).update(attempts=settings.GRADER_MAX_ATTEMPTS, started_at=_long_ago(settings))
    assert lifecycle.reap().abandoned == [("rejudge", rejudged.pk)]
    rejudged.refresh_from_db()
    assert (rejudged.status, rejudged.new_outcome) == (Status.DONE, Outcome.INFRA_ERROR)
    assert rejudge.apply_rejudge(rejudged.rejudge, admin_user) == 0


def test_a_restarted_worker_recovers_only_its_own_claims(submission, rejudged, enqueued, learner):
    assert lifecycle.claim(lifecycle.REJUDGES, rejudged.pk, "crashy@test")
    Submission.objects.filter(pk=submission.pk).update(status=Status.RUNNING, claimed_by="other@test#abc")
    recovered = lifecycle.recover_claims("crashy@test")
    assert recovered == [("rejudge", rejudged.pk)]
    assert enqueued == [("rejudge", rejudged.pk, "submit")]
    assert Submission.objects.get(pk=submission.pk).status == Status.RUNNING


def test_the_timeouts_nest_from_one_clock(settings):
    from sandbox.runner import GRACE_S, STARTUP_S

    # The runner's watchdog for a Submit, with a speed phase at its longest (sandbox.runner).
    longest_job = STARTUP_S + settings.SANDBOX_MAX_TIME_S * 2 + settings.SANDBOX_MAX_SPEED_S * 2 + GRACE_S
    assert longest_job < settings.GRADER_SOFT_TIME_LIMIT_S
    assert settings.GRADER_SOFT_TIME_LIMIT_S < settings.GRADER_HARD_TIME_LIMIT_S < settings.BROKER_VISIBILITY_TIMEOUT_S
    assert settings.AUTHORING_CHECK_SOFT_TIME_LIMIT_S < settings.AUTHORING_CHECK_HARD_TIME_LIMIT_S < settings.BROKER_VISIBILITY_TIMEOUT_S
    assert settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] == settings.BROKER_VISIBILITY_TIMEOUT_S


def test_a_rung_cannot_ask_for_more_time_than_the_clock_allows(settings):
    from types import SimpleNamespace

    from exercises.jobs import job_for

    content = SimpleNamespace(visible_tests="", hidden_tests="", limits={"time_s": 10_000}, gpu=False, reference="")
    assert job_for(content, "submit", "").limits.time_s == settings.SANDBOX_MAX_TIME_S
    assert job_for(content, "run", "").limits.time_s == min(settings.SANDBOX_MAX_TIME_S, settings.GRADER_RUN_TIME_S)
