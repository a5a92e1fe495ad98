"""What a learner may see of a grade (issue 14.1) and what happens when a grade cannot be stored (14.4)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from django.db import DataError

from exercises.models import Rung
from grader import results, services
from grader.constants import Kind, Outcome, Status
from grader.messages import MEMORY_IN_TEST, OUTCOME_SUMMARY, RERUN_FAILED, SUBMIT_ERROR_AFTER_HIDDEN_CALL
from grader.models import Submission
from sandbox.jobs import MAX_TEST_NAME, CaseResult, planned_tests
from sandbox.report import parse_report
from sandbox.testing import FakeRunner, job_result

SECRET = "hidden input 1234567"


def _grade(rung: Rung, learner, kind: str, result) -> Submission:
    submission = services.submit_solution(user=learner, rung=rung, kind=kind, code="x = 1\n")
    services.grade_submission(submission.pk, runner=FakeRunner(result))
    submission.refresh_from_db()
    return submission


def _state(client, learner, submission: Submission) -> dict[str, Any]:
    client.force_login(learner)
    state: dict[str, Any] = client.get(f"/submissions/{submission.pk}/state").json()
    return state


@pytest.mark.parametrize(
    ("outcome", "message"),
    [
        (Outcome.ERROR, f"ValueError: {SECRET}"),
        (Outcome.FAILED, f"the harness saw exit status 3 ({SECRET})"),
        (Outcome.TIMEOUT, f"Timed out after {SECRET}"),
        (Outcome.MEMORY_LIMIT, f"killed at {SECRET}"),
    ],
)
def test_a_submit_summary_is_a_fixed_text_once_a_hidden_test_called_the_code(kv_rung, learner, client, outcome, message):
    tests = [CaseResult(name="test_hidden_edge", outcome="failed", message=f"assert {SECRET}")]
    submission = _grade(kv_rung, learner, Kind.SUBMIT, job_result(outcome, tests, message=message, hidden_calls_made=True))
    state = _state(client, learner, submission)
    assert state["outcome"] == outcome
    assert state["summary"] == OUTCOME_SUMMARY[outcome]
    # A memory limit names the test that was running (issue 59): the first without a result, never the harness's text.
    first_unreported = next(name for name in planned_tests(submission.rung_version.hidden_tests) if name != "test_hidden_edge")
    fixed = {Outcome.ERROR: SUBMIT_ERROR_AFTER_HIDDEN_CALL, Outcome.MEMORY_LIMIT: MEMORY_IN_TEST.format(name=first_unreported)}
    assert state["message"] == fixed.get(outcome, "")
    assert SECRET not in str(state)
    # Staff keep the harness's own text.
    assert SECRET in submission.test_results.get(name="test_hidden_edge").detail


def test_an_error_before_any_hidden_call_is_shown_as_it_is(kv_rung, learner, client):
    load_error = "SyntaxError: invalid syntax (solution.py, line 3)"
    submission = _grade(kv_rung, learner, Kind.SUBMIT, job_result(Outcome.ERROR, [], message=load_error, hidden_calls_made=False))
    assert _state(client, learner, submission)["message"] == load_error


def test_after_a_submit_durations_are_withheld_and_memory_and_timings_coarsened(kv_rung, learner, client):
    hidden = planned_tests(kv_rung.current_version.hidden_tests)
    tests = [CaseResult(name=name, outcome="passed", duration_s=0.1 + n / 1000) for n, name in enumerate(hidden)]
    peak = 123_456_789
    submission = _grade(kv_rung, learner, Kind.SUBMIT, job_result(Outcome.PASSED, tests, peak_memory_bytes=peak, timings={"run_s": 1.337, "total_s": 2.5}))
    state = _state(client, learner, submission)
    assert state["outcome"] == Outcome.PASSED
    assert [test["duration_s"] for test in state["tests"]] == [0.0] * len(hidden)
    assert state["peak_memory_bytes"] == math.ceil(peak / results.MEMORY_BUCKET) * results.MEMORY_BUCKET
    assert state["timings"]["run_s"] == 1 and state["timings"]["total_s"] == 2


def test_after_a_run_durations_memory_and_output_are_shown_exactly(kv_rung, learner, client):
    tests = [CaseResult(name=name, outcome="passed", duration_s=0.1234) for name in planned_tests(kv_rung.current_version.visible_tests)]
    submission = _grade(kv_rung, learner, Kind.RUN, job_result(Outcome.PASSED, tests, peak_memory_bytes=12345, stdout="hello"))
    state = _state(client, learner, submission)
    assert state["outcome"] == Outcome.PASSED
    assert state["tests"][0]["duration_s"] == 0.123
    assert state["peak_memory_bytes"] == 12345 and state["stdout"] == "hello"


def test_nul_and_invalid_unicode_from_the_sandbox_are_stored_safely(kv_rung, learner):
    tests = [CaseResult(name="test_visible\x00", outcome="failed", message="bad \ud800 text\x00")]
    submission = _grade(kv_rung, learner, Kind.RUN, job_result(Outcome.FAILED, tests, stdout="out\x00\udcff", message="boom\x00"))
    assert submission.status == Status.DONE and submission.outcome == Outcome.FAILED
    assert "\x00" not in submission.stdout and submission.stdout.startswith("out")
    row = submission.test_results.get()
    assert row.name == "test_visible" and "\x00" not in row.message


def test_a_result_that_cannot_be_stored_ends_with_a_stored_fallback(kv_rung, learner, monkeypatch):
    def refuse(*args, **kwargs):
        raise DataError("invalid byte sequence for encoding UTF8: 0x00")

    monkeypatch.setattr(results, "write_test_rows", refuse)
    submission = _grade(kv_rung, learner, Kind.SUBMIT, job_result(Outcome.PASSED))
    assert submission.status == Status.DONE
    assert (submission.outcome, submission.error_code) == (Outcome.INFRA_ERROR, "record_failed")
    assert submission.message == "The grader could not store this result. This attempt does not count; please try again."
    assert learner.progress.count() == 0  # ours: never counted
    # The learner may send code for this rung again.
    assert services.submit_solution(user=learner, rung=kv_rung, kind=Kind.RUN, code="x = 2\n").status == Status.QUEUED


@pytest.mark.parametrize(("outcome", "failure"), [(Outcome.TIMEOUT, "timeout"), (Outcome.ERROR, "error"), (Outcome.FAILED, "incomplete")])
def test_a_failed_rerun_is_explained_with_a_fixed_sentence(kv_rung, learner, client, outcome, failure):
    tests = [CaseResult(name="test_hidden_edge", outcome="passed")]
    result = job_result(outcome, tests, message=f"second check: {SECRET}", hidden_calls_made=True, rerun_failure=failure)
    submission = _grade(kv_rung, learner, Kind.SUBMIT, result)
    state = _state(client, learner, submission)
    assert state["outcome"] == outcome
    assert state["message"] == RERUN_FAILED[failure]
    assert SECRET not in str(state)


def test_a_result_the_database_really_refuses_ends_with_a_stored_fallback(kv_rung, learner):
    # Two tests of one name break the unique (submission, name) constraint:
    # a real refusal, which on PostgreSQL also aborts the transaction, so
    # the fallback must be written after a rollback, not inside the failed write.
    tests = [CaseResult(name="test_same", outcome="passed"), CaseResult(name="test_same", outcome="failed", message="again")]
    submission = _grade(kv_rung, learner, Kind.SUBMIT, job_result(Outcome.FAILED, tests))
    assert submission.status == Status.DONE
    assert (submission.outcome, submission.error_code) == (Outcome.INFRA_ERROR, "record_failed")
    assert submission.test_results.count() == 0
    assert learner.progress.count() == 0


# Reports the database could not hold (red-team B): numbered names, an unknown peak.
def test_long_test_names_that_differ_only_past_the_limit_are_stored_as_distinct_rows(kv_rung, learner, enqueued):
    long = "test_" + "a" * 300
    report = {"outcome": "failed", "tests": [{"name": long + "1", "outcome": "failed"}, {"name": long + "2", "outcome": "passed"}]}
    submission = _grade(kv_rung, learner, Kind.RUN, parse_report(report))
    assert submission.outcome == Outcome.FAILED
    names = list(submission.test_results.order_by("order").values_list("name", flat=True))
    assert len(set(names)) == 2 and all(len(name) <= MAX_TEST_NAME for name in names)
    assert names[1].endswith("#2")


@pytest.mark.parametrize("kind", [Kind.RUN, Kind.SUBMIT])
def test_a_peak_memory_the_database_cannot_hold_is_stored_as_unknown(kv_rung, learner, enqueued, kind):
    submission = _grade(kv_rung, learner, kind, parse_report({"outcome": "failed", "peak_memory_bytes": 10**29, "tests": []}))
    assert (submission.outcome, submission.peak_memory_bytes) == (Outcome.FAILED, None)


def test_the_largest_storable_peak_is_still_storable_once_coarsened(kv_rung, learner, enqueued):
    submission = _grade(kv_rung, learner, Kind.SUBMIT, parse_report({"outcome": "failed", "peak_memory_bytes": 2**63 - 1, "tests": []}))
    assert submission.outcome == Outcome.FAILED
    assert submission.peak_memory_bytes is not None and 2**63 - results.MEMORY_BUCKET <= submission.peak_memory_bytes < 2**63
