"""A passing Submit's re-run replays each test's calls to a fresh process.

The grade must be the one a real re-run would give: references replay every
test; code whose answers differ from process to process still passes, by
running for real; code that answers from state kept between tests (in an
object's class or a file) is caught; objects handed back to the learner's
code replay with the fresh process's handle ids. docs/security.md ("The
re-run replays each test") gives the argument.
"""

from __future__ import annotations

import textwrap

import pytest

from sandbox.jobs import Job, JobResult, Limits
from tests.security.support import ROOT, Sandbox

pytestmark = [pytest.mark.docker]

RUNGS = ROOT / "exercises" / "llm-systems-frontier"


def _submit(sandbox: Sandbox, source: str, tests: str) -> JobResult:
    return sandbox.runner.run(Job(mode="submit", source=source, tests={"test_hidden.py": tests}, limits=Limits(time_s=30)))


@pytest.mark.parametrize(
    "rung",
    [
        "inference-and-serving/rungs/01-kv-cache-size",
        "inference-and-serving/rungs/03-continuous-batching",
        "inference-and-serving/rungs/06-paged-attention",
        "inference-and-serving/rungs/07-paged-attention-decode",
        "training-at-scale/rungs/04-pipeline-schedule",
    ],
)
def test_a_reference_replays_every_test(sandbox: Sandbox, rung: str) -> None:
    folder = RUNGS / rung
    reference = (folder / "reference.py").read_text()
    result = sandbox.runner.run(Job(mode="submit", source=reference, tests={"test_hidden.py": (folder / "test_hidden.py").read_text()}, reference=reference))
    assert result.outcome == "passed", result
    assert result.rerun_replayed == len(result.tests), result


def test_a_test_past_the_tapes_budget_runs_for_real(sandbox: Sandbox) -> None:
    # The speculative-decoding rung's large-vocabulary test sends tens of MiB.
    folder = RUNGS / "inference-and-serving/rungs/05-speculative-decoding"
    reference = (folder / "reference.py").read_text()
    result = sandbox.runner.run(Job(mode="submit", source=reference, tests={"test_hidden.py": (folder / "test_hidden.py").read_text()}, reference=reference))
    assert result.outcome == "passed", result
    assert 0 < result.rerun_replayed < len(result.tests), result


TESTS = "".join(f"def test_{n}(solution):\n    assert solution.double({n})[0] == {2 * n}\n\n" for n in range(8))

CLOCK = textwrap.dedent(
    """
    import time

    def double(x):
        return 2 * x, time.time()  # the second item differs in every process
    """
)


def test_answers_that_differ_between_processes_still_pass_by_running_for_real(sandbox: Sandbox) -> None:
    result = _submit(sandbox, CLOCK, TESTS)
    assert result.outcome == "passed", result
    assert result.rerun_replayed == 0, result
    assert not result.state_leaks


IN_A_FILE = textwrap.dedent(
    """
    import os

    _FLAG = "/tmp/.seen"

    def double(x):
        if not os.path.exists(_FLAG):
            open(_FLAG, "w").close()
            if x != 0:
                return -1, 0
        return 2 * x, 0
    """
)


def test_answers_kept_in_a_file_are_caught(sandbox: Sandbox) -> None:
    result = _submit(sandbox, IN_A_FILE, TESTS)
    assert result.outcome == "failed", result
    assert result.state_leaks == [f"test_{n}" for n in range(1, 8)], result
    assert result.rerun_replayed == 1, result  # test_0, then test_1 differs: the rest ran for real


OBJECT_TESTS = "".join(
    textwrap.dedent(
        f"""
        def test_{n}(solution):
            box = solution.Box({n})
            one = solution.Box(1)
            both = solution.combine(box, one)
            assert both.value() == {n} + 1
            assert solution.combine(one, both).value() == {n} + 2
            assert box.value() == {n}
        """
    )
    for n in range(6)
)

BOXES = textwrap.dedent(
    """
    class Box:
        made = 0

        def __init__(self, v):
            Box.made += 1
            self.v = v

        def value(self):
            return self.v

    def combine(a, b):
        return Box(a.v + b.v)
    """
)

# Right in the suite's order: wrong while two boxes or fewer were made, except for box 0.
PRIMED_BY_OTHER_TESTS = BOXES.replace("return Box(a.v + b.v)", "return Box(a.v + b.v if Box.made > 2 or a.v == 0 else -1)")


def test_objects_passed_back_replay_with_the_fresh_processes_ids(sandbox: Sandbox) -> None:
    # The first run's process numbers each test's boxes after the last test's;
    # a fresh process numbers them from 1: the replay renumbers, and matches.
    result = _submit(sandbox, BOXES, OBJECT_TESTS)
    assert result.outcome == "passed", result
    assert result.rerun_replayed == 6, result


def test_answers_kept_in_a_class_attribute_are_caught(sandbox: Sandbox) -> None:
    result = _submit(sandbox, PRIMED_BY_OTHER_TESTS, OBJECT_TESTS)
    assert result.outcome == "failed", result
    assert result.state_leaks == [f"test_{n}" for n in range(1, 6)], result
