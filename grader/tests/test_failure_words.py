"""The harness reports why learner code failed as facts (sandbox.jobs.Failure); the grader words them (issue 56, item 3)."""

from __future__ import annotations

import pytest

from grader import messages, results
from grader.constants import Kind
from sandbox.jobs import FAILURE_CODES, CaseResult, Failure, JobResult

TB = 'File "solution.py", line 2, in f\nValueError: bad'


@pytest.mark.parametrize(
    ("failure", "message", "expected"),
    [
        (Failure("load_error", traceback="SyntaxError: invalid syntax"), "", "Your code failed to load:\nSyntaxError: invalid syntax"),
        (Failure("raised", traceback=TB), "ValueError: bad", f"ValueError: bad\n\nRaised in your code:\n{TB}"),
        (Failure("learner_died", signal=9), "", "Your code's process was killed by signal 9."),
        (Failure("learner_died", status=3), "", "Your code ended its process (exit status 3), e.g. with sys.exit() or os._exit()."),
        (Failure("learner_died", status=0, traceback="SystemExit: 0"), "", (
            "Your code ended its process (exit status 0), e.g. with sys.exit() or os._exit().\n\nRaised in your code:\nSystemExit: 0"
        )),
        (Failure("learner_died"), "", "Your code's process stopped answering."),
        (Failure("server_died"), "", "Your code ended the process that runs it, e.g. by killing its parent process."),
        (Failure("server_died", status=1), "", "Your code ended the process that runs it (exit status 1), e.g. by killing its parent process."),
        (Failure("channel_broken", detail="a frame claiming to be 'child_exit'"), "", (
            "Your code wrote on the grader's channel, a file descriptor it inherited (a frame claiming to be 'child_exit')."
        )),
        (Failure("value_too_large", detail="frame too large"), "", "Your code returned a value too large to grade (frame too large)."),
        (Failure("invalid_return"), "", "Your code returned a value that cannot be graded."),
        (Failure("unknown", status=2), "", "Your code failed in a way the grader could not name."),
        (None, "assert 1 == 2", "assert 1 == 2"),
    ],
)
def test_each_failure_is_worded_from_its_facts(failure, message, expected):
    assert messages.failure_text(failure, message) == expected


def test_every_code_the_host_reads_has_words():
    for code in FAILURE_CODES:
        assert code in messages.FAILURE_SENTENCES


class _Version:
    visible_tests = "def test_a(solution):\n    pass\n"
    hidden_tests = visible_tests

    def hidden_description(self, test_name: str) -> str:
        return "An edge case failed."


def test_a_run_shows_the_worded_failure_and_a_submit_keeps_it_for_staff():
    case = CaseResult(name="test_a", outcome="failed", message="", failure=Failure("learner_died", signal=9))
    run = results.present_test(case, kind=Kind.RUN, version=_Version())
    assert run.message == "Your code's process was killed by signal 9."
    submit = results.present_test(case, kind=Kind.SUBMIT, version=_Version())
    assert (submit.message, submit.detail) == ("An edge case failed.", "Your code's process was killed by signal 9.")


def test_a_job_level_failure_is_the_run_summary_and_a_load_error_the_submit_summary():
    died = JobResult(outcome="error", failure=Failure("server_died"))
    assert results.summary_for(died, Kind.RUN) == messages.failure_text(died.failure)
    loading = JobResult(outcome="error", failure=Failure("load_error", traceback="NameError: x"), hidden_calls_made=False)
    assert results.summary_for(loading, Kind.SUBMIT) == "Your code failed to load:\nNameError: x"
    after_call = JobResult(outcome="error", failure=Failure("learner_died", status=1, traceback="secret"), hidden_calls_made=True)
    assert results.summary_for(after_call, Kind.SUBMIT) == messages.SUBMIT_ERROR_AFTER_HIDDEN_CALL
