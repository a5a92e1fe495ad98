"""A Submit's second run: every test again when the first run passed, only
the failed ones when it failed (the grade is settled; they run to explain).
Either way a test is replayed first (``dojo_harness.replay``), and runs for
real only when its replay answers differently."""

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


# The test's own work (here a sleep on the harness's side, as a hidden test
# computes the reference's answer and checks a distribution) follows its one
# call: a replay repeats the call, not the test.
CHECKED_SLOWLY = "".join(
    f"def test_{n}(solution):\n    got = solution.double({n})\n    import time; time.sleep(0.3)\n    assert got == {2 * n}\n\n" for n in range(10)
)


@pytest.mark.parametrize("wrong_from", [0, 5])
def test_a_failed_test_that_answers_the_same_in_a_fresh_process_is_replayed_not_run(sandbox: Sandbox, wrong_from: int) -> None:
    source = f"def double(x):\n    return 2 * x + (x >= {wrong_from})\n"
    result = sandbox.runner.run(Job(mode="submit", source=source, tests={"test_hidden.py": CHECKED_SLOWLY}, limits=Limits(time_s=30)))
    assert result.outcome == "failed", result
    failed = [test.name for test in result.tests if test.outcome == "failed"]
    assert failed == [f"test_{n}" for n in range(wrong_from, 10)], result
    assert result.state_leaks == [], result
    # Every failed test was replayed (none ran again for real) ...
    assert result.rerun_replayed == len(failed), result
    # ... so the re-run added no 0.3 s checks: the first run's ten are 3 s.
    assert 3.0 <= float(result.timings["run_s"]) < 3.0 + 0.15 * len(failed), result


WRONG_AND_CLOCKED = textwrap.dedent(
    """
    import time

    def double(x):
        return 2 * x + 1, time.time()  # wrong, and the second item differs in every process
    """
)


def test_a_failed_test_whose_replay_differs_runs_again_for_real_and_still_fails(sandbox: Sandbox) -> None:
    tests = "".join(f"def test_{n}(solution):\n    assert solution.double({n})[0] == {2 * n}\n\n" for n in range(4))
    result = sandbox.runner.run(Job(mode="submit", source=WRONG_AND_CLOCKED, tests={"test_hidden.py": tests}, limits=Limits(time_s=30)))
    assert result.outcome == "failed", result
    assert all(test.outcome == "failed" for test in result.tests), result
    # The first replay differed (the clock), so every failed test ran for real, and failed alone too.
    assert result.rerun_replayed == 0, result
    assert result.state_leaks == [], result
