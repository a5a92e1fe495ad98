"""A Submit's second run: every test again when the first run passed, only
the failed ones when it failed (the grade is settled; they run to explain)."""

from __future__ import annotations

import textwrap

import pytest

from sandbox.jobs import Job, Limits
from tests.security.support import Sandbox

pytestmark = [pytest.mark.docker]

# Each call takes 0.4 s of the learner's time; ten tests call once each.
SLOW = textwrap.dedent(
    """
    import time

    def double(x, _calls=[]):
        time.sleep(0.4)
        _calls.append(x)
        if x == 9 and len(_calls) > 1:  # wrong only after another call: state kept between calls
            return -1
        return 2 * x
    """
)
TESTS = "".join(f"def test_{n}(solution):\n    assert solution.double({n}) == {2 * n}\n\n" for n in range(10))


def _submit(sandbox: Sandbox, source: str) -> tuple[object, float]:
    result = sandbox.runner.run(Job(mode="submit", source=source, tests={"test_hidden.py": TESTS}, limits=Limits(time_s=30)))
    return result, float(result.timings["run_s"])


def test_a_failing_submit_runs_only_its_failed_tests_again_and_still_names_the_state_leak(sandbox: Sandbox) -> None:
    result, run_s = _submit(sandbox, SLOW)
    assert result.outcome == "failed", result  # type: ignore[attr-defined]
    # test_9 failed after nine other calls and passes on its own: the note says so.
    assert result.state_leaks == ["test_9"], result  # type: ignore[attr-defined]
    # Ten calls in the first run and one in the second (4.4 s of sleeping),
    # not twenty (8 s): the passing tests did not run again.
    assert 4.0 <= run_s < 6.5, run_s


def test_a_passing_submit_runs_every_test_again(sandbox: Sandbox) -> None:
    passing = SLOW.replace("if x == 9 and len(_calls) > 1:", "if False:")
    result, run_s = _submit(sandbox, passing)
    assert result.outcome == "passed", result  # type: ignore[attr-defined]
    assert run_s >= 8.0, run_s
