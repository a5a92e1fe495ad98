"""A rung is solved when the learner pressed Submit, not when a busy queue graded it.

Course deadlines (courses.deadlines) judge ``Progress.solved_at``: a Submit
sent a minute before the due date and graded after it, because the queue
was long at the deadline, is on time.
"""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from core.types import User
from exercises.models import Rung
from grader import rejudge, services
from grader.constants import Kind, Outcome
from grader.models import Progress, Rejudge, Submission
from sandbox.testing import FakeRunner, job_result


def _submitted_an_hour_ago(user: User, rung: Rung, outcome: str) -> Submission:
    submission = services.submit_solution(user=user, rung=rung, kind=Kind.SUBMIT, code="x = 1\n")
    an_hour_ago = timezone.now() - dt.timedelta(hours=1)
    assert Submission.objects.filter(pk=submission.pk).update(enqueued_at=an_hour_ago) == 1
    services.grade_submission(submission.pk, runner=FakeRunner(job_result(outcome)))
    return Submission.objects.get(pk=submission.pk)


def test_a_pass_is_dated_when_it_was_submitted(catalog, learner, enqueued):
    rung = Rung.objects.get(slug="kv-cache-size")
    submission = _submitted_an_hour_ago(learner, rung, Outcome.PASSED)
    assert submission.finished_at is not None and submission.finished_at - submission.enqueued_at > dt.timedelta(minutes=59)
    assert Progress.objects.get(user=learner, rung=rung).solved_at == submission.enqueued_at


def test_a_rejudge_that_passes_an_attempt_dates_the_solve_when_it_was_submitted(catalog, learner, admin_user, enqueued):
    rung = Rung.objects.get(slug="kv-cache-size")
    failed = _submitted_an_hour_ago(learner, rung, Outcome.FAILED)
    batch = rejudge.start_rejudge([failed], target=Rejudge.Target.CURRENT, user=admin_user)
    rejudge.rejudge_one(batch.results.get().pk, runner=FakeRunner(job_result(Outcome.PASSED)))
    assert rejudge.apply_rejudge(batch, admin_user) == 1
    assert Progress.objects.get(user=learner, rung=rung).solved_at == failed.enqueued_at
