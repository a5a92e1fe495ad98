"""A Check is claimed, finished and reaped like every graded job (grader.lifecycle)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from authoring import services
from authoring.models import RungCheck
from exercises.models import Module, Rung
from grader import lifecycle
from grader.constants import Status
from sandbox.testing import FakeRunner


@pytest.fixture
def check(catalog, admin_user, enqueued, django_capture_on_commit_callbacks) -> RungCheck:
    draft = services.draft_from_version(Module.objects.get(slug="inference-and-serving"), Rung.objects.get(slug="kv-cache-size"))
    draft.save()
    with django_capture_on_commit_callbacks(execute=True):
        made = services.request_check(draft, admin_user)
    assert enqueued == [("check", made.pk, "submit")]
    enqueued.clear()
    return made


def _stuck(check: RungCheck, settings, **fields) -> None:
    started = timezone.now() - timedelta(seconds=settings.AUTHORING_CHECK_HARD_TIME_LIMIT_S + 60)
    RungCheck.objects.filter(pk=check.pk).update(started_at=started, **fields)


def test_checks_are_a_job_type_the_reaper_knows(check):
    assert "check" in [job_type.label for job_type in lifecycle.job_types()]


def test_a_check_whose_worker_died_is_put_back_and_then_finishes(check, enqueued, settings, django_capture_on_commit_callbacks):
    assert lifecycle.claim(services.CHECKS, check.pk, "dead@test")
    _stuck(check, settings)
    with django_capture_on_commit_callbacks(execute=True):
        report = lifecycle.reap()
    assert report.reset == [("check", check.pk)]
    assert enqueued == [("check", check.pk, "submit")]
    # The redelivered task claims it again and finishes it.
    done = services.run_check(check.pk, runner=FakeRunner.by_rules(lambda job: set()))
    assert done is not None and done.status == Status.DONE and done.attempts == 2


def test_a_check_that_is_younger_than_its_hard_limit_is_left_alone(check, settings):
    assert lifecycle.claim(services.CHECKS, check.pk)
    RungCheck.objects.filter(pk=check.pk).update(started_at=timezone.now() - timedelta(seconds=settings.GRADER_HARD_TIME_LIMIT_S + 60))
    assert lifecycle.reap().reset == []


def test_a_check_out_of_attempts_ends_failed_with_a_reason(check, settings):
    assert lifecycle.claim(services.CHECKS, check.pk)
    _stuck(check, settings, attempts=settings.GRADER_MAX_ATTEMPTS)
    assert lifecycle.reap().abandoned == [("check", check.pk)]
    check.refresh_from_db()
    assert (check.status, check.ok) == (Status.DONE, False) and "interrupted" in check.error


def test_a_check_whose_claim_was_lost_records_nothing(check):
    first = lifecycle.claim(services.CHECKS, check.pk, "slow@test")
    assert first is not None
    RungCheck.objects.filter(pk=check.pk).update(status=Status.QUEUED)
    assert services.run_check(check.pk, runner=FakeRunner.by_rules(lambda job: set())) is not None  # another worker's run
    assert lifecycle.finish(first, ok=True) is False
    check.refresh_from_db()
    assert check.ok is False
