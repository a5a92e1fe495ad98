"""Retention (issue 61, item 2): ``manage.py compact_runs`` moves old Runs'
per-test rows into their submission, and nothing a learner or teacher can
open changes: the learner's history and every reopened result, the
teacher's timeline and feedback page, a rejudge's old results."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from courses.timeline import _attempts
from frontend.services import attempt_history
from grader.constants import CaseOutcome, Kind, Outcome, Status
from grader.models import Submission, SubmissionTestResult
from grader.rejudge import _tests_of
from grader.results import ShownTest, write_test_rows
from grader.retention import stored_tests

pytestmark = pytest.mark.sqlite_pass


def _graded(user: Any, rung: Any, kind: str, days_ago: float, tests: Sequence[tuple[str, str]]) -> Submission:
    at = timezone.now() - timedelta(days=days_ago)
    submission = Submission.objects.create(
        user=user, rung=rung, rung_version=rung.current_version, kind=kind, code=f"# {kind} {days_ago}\n", status=Status.DONE,
        outcome=Outcome.PASSED if all(o == CaseOutcome.PASSED for _, o in tests) else Outcome.FAILED, enqueued_at=at, started_at=at, finished_at=at,
    )
    write_test_rows(submission, [ShownTest(name, outcome, 0.25, f"message of {name}", "", hidden=False) for name, outcome in tests])
    return submission


def _seen(client: Any, learner: Any, rung: Any) -> dict[str, Any]:
    """What the learner and a teacher can open, and what a rejudge reads."""
    history = attempt_history(learner, rung)
    mine = Submission.objects.filter(user=learner).order_by("pk")
    return {
        "history": [(a.submission.pk, a.passed, a.total, a.number) for a in history.attempts],
        "results": {s.pk: client.get(f"/submissions/{s.pk}/state").json() for s in mine},
        "timeline": [(s.pk, getattr(s, "test_count", None), getattr(s, "passed_count", None)) for s in _attempts(learner, {rung.pk})],
        "feedback_tests": {s.pk: [(t.name, t.outcome, t.message, t.hidden, t.duration_s) for t in stored_tests(s)] for s in mine},
        "rejudge_old": {s.pk: _tests_of(s) for s in mine},
    }


def test_old_runs_are_compacted_and_nothing_anyone_can_open_changes(kv_rung, learner, other_learner, client):
    two_failed = [("test_a", CaseOutcome.PASSED), ("test_b", CaseOutcome.FAILED), ("test_c", CaseOutcome.FAILED)]
    old_runs = [_graded(learner, kv_rung, Kind.RUN, days, two_failed) for days in (200, 150)]
    old_submit = _graded(learner, kv_rung, Kind.SUBMIT, 190, [("hidden_1", CaseOutcome.PASSED), ("hidden_2", CaseOutcome.FAILED)])
    recent_run = _graded(learner, kv_rung, Kind.RUN, 1, [("test_a", CaseOutcome.PASSED)])
    others_latest = _graded(other_learner, kv_rung, Kind.RUN, 300, two_failed)
    client.force_login(learner)
    before = _seen(client, learner, kv_rung)
    assert before["history"][-1][1:3] == (1, 3)

    out = StringIO()
    call_command("compact_runs", stdout=out)
    assert out.getvalue().strip() == "compacted 2 Runs (6 test rows)"

    for run in old_runs:
        run.refresh_from_db()
        assert run.archived_tests is not None and not SubmissionTestResult.objects.filter(submission=run).exists()
    # Submits keep their rows; so do recent Runs and a learner's latest Run of a rung, however old.
    for kept in (old_submit, recent_run, others_latest):
        assert SubmissionTestResult.objects.filter(submission=kept).exists()
        kept.refresh_from_db()
        assert kept.archived_tests is None
    assert _seen(client, learner, kv_rung) == before

    call_command("compact_runs", stdout=(again := StringIO()))
    assert again.getvalue().strip() == "compacted 0 Runs (0 test rows)"
