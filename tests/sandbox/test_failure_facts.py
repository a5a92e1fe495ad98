"""Why learner code failed crosses the sandbox as facts, never as the harness's sentences (issue 56, item 3).

The harness reports a code, the exit status or signal, and the learner's
traceback as data (``sandbox.jobs.Failure``); grader.messages words them.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from grader import messages
from tests.security.support import Sandbox

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sandbox" / "harness"))

from dojo_harness.proxy import ChannelBroken, LearnerDied, ServerDied, failure_record  # type: ignore[import-not-found]

SOURCE = textwrap.dedent(
    """
    import os

    def raises():
        raise ValueError("bad value")

    def huge():
        return "x" * (17 * 1024 * 1024)

    def leaves():
        os._exit(3)
    """
)
TESTS = {
    "test_facts.py": textwrap.dedent(
        """
        def test_a_raises(solution):
            solution.raises()

        def test_b_too_large(solution):
            solution.huge()

        def test_c_leaves(solution):
            solution.leaves()
        """
    )
}


@pytest.mark.docker
def test_each_failure_is_a_code_with_facts_and_the_grader_words_it(sandbox: Sandbox) -> None:
    graded = sandbox.grade(SOURCE, tests=TESTS)
    result = graded.result
    assert result.outcome == "error", graded.describe()
    raised, too_large, leaves = result.tests
    assert raised.failure is not None and raised.failure.code == "raised", graded.describe()
    assert raised.message == "ValueError: bad value" and 'raise ValueError("bad value")' in raised.failure.traceback
    assert too_large.failure is not None and too_large.failure.code == "value_too_large" and too_large.message == "", graded.describe()
    assert leaves.failure is not None and (leaves.failure.code, leaves.failure.status) == ("learner_died", 3), graded.describe()
    assert result.failure is not None and (result.failure.code, result.failure.status) == ("learner_died", 3) and result.message == ""
    # No sentence of the harness's own: every word the learner reads is the grader's.
    assert "your code" not in graded.everything().lower(), graded.describe()
    assert messages.failure_text(leaves.failure).startswith("Your code ended its process (exit status 3)")
    # The live events carry the same facts.
    live = [data for kind, data in graded.events if kind == "test"]
    assert [data["failure"].code for data in live] == ["raised", "value_too_large", "learner_died"]


@pytest.mark.docker
def test_a_module_that_fails_to_load_says_so_with_its_traceback(sandbox: Sandbox) -> None:
    graded = sandbox.grade("import os\nraise NameError('nope at import')\n")
    result = graded.result
    assert result.outcome == "error" and result.hidden_calls_made is False, graded.describe()
    assert result.failure is not None and result.failure.code == "load_error", graded.describe()
    assert "NameError: nope at import" in result.failure.traceback and result.message == ""
    assert all(test.failure is not None and test.failure.code == "load_error" for test in result.tests), graded.describe()
    assert messages.failure_text(result.failure).startswith("Your code failed to load:\n")


def test_an_exit_code_becomes_a_status_or_a_signal_never_a_sentence() -> None:
    assert LearnerDied(-9).failure() == {"code": "learner_died", "signal": 9, "traceback": "", "detail": ""}
    assert ServerDied(2).failure("tb") == {"code": "server_died", "status": 2, "traceback": "tb", "detail": ""}
    assert LearnerDied(None).failure() == failure_record("learner_died")
    assert ChannelBroken("x" * 1000).failure()["detail"] == "x" * 300
