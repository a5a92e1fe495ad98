"""Everything a learner's code prints before its last answer reaches the Run's output.

The harness reads the learner's stdout and stderr pipes in a thread and,
once the tests are over, takes in what is still in them (``OutputTap.settle``)
instead of waiting a fixed time. The learner's process flushes before each
answer, so output printed just before the last return, less than a pipe
holds and so still sitting in it, must all arrive.
"""

from __future__ import annotations

import pytest

from tests.security.support import Sandbox

PRINTS = '''
import sys

print("loaded")


def shout(n):
    print("x" * n)
    print("e" * n, file=sys.stderr)
    return n


def last():
    print("LAST")
    return 0
'''

TESTS = {
    "test_prints.py": (
        "def test_prints(solution):\n"
        "    assert solution.shout(20000) == 20000\n"
        "    assert solution.shout(30000) == 30000\n"
        "    assert solution.last() == 0\n"
    )
}
STDOUT = "loaded\n" + "x" * 20000 + "\n" + "x" * 30000 + "\nLAST\n"
STDERR = "e" * 20000 + "\n" + "e" * 30000 + "\n"


@pytest.mark.docker
def test_a_run_shows_all_that_was_printed_up_to_the_last_answer(sandbox: Sandbox) -> None:
    # Several jobs, each in the container the one before used: no job may lose its tail.
    for _ in range(4):
        graded = sandbox.grade(PRINTS, mode="run", tests=TESTS)
        assert graded.outcome == "passed", graded.describe()
        assert graded.result.stdout == STDOUT
        assert graded.result.stderr == STDERR
