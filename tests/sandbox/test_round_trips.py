"""A call from a test to the learner's code is one round trip, not two.

The harness asks once whether ``solution.f`` (or ``obj.method``) is
callable; later calls go straight to the learner's process, which looks the
name up again at each call. A learner's object can count its own attribute
lookups, so the tests below see exactly how often the harness asked.
"""

from __future__ import annotations

import pytest

from tests.security.support import Sandbox

COUNTING = """
class Counter:
    def __init__(self):
        object.__setattr__(self, "seen", [])

    def __getattribute__(self, name):
        if name == "step":
            object.__getattribute__(self, "seen").append(name)
        return object.__getattribute__(self, name)

    def step(self, x):
        return x + 1

    def lookups(self):
        return len(object.__getattribute__(self, "seen"))


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def become_a_number():
    global sub
    sub = 5


def become_another_function():
    global add
    add = lambda a, b: a * b
"""

TESTS = {
    "test_round_trips.py": '''
import pytest


def test_ten_calls_look_the_method_up_ten_times(solution):
    counter = solution.Counter()
    assert [counter.step(n) for n in range(10)] == list(range(1, 11))
    # One lookup to ask whether ``step`` is callable, then one per call, in
    # the learner's process (asking before every call made it 20).
    assert counter.lookups() == 11


def test_a_rebound_name_is_looked_up_again_at_each_call(solution):
    assert solution.add(2, 3) == 5
    solution.become_another_function()
    assert solution.add(2, 3) == 6


def test_a_name_rebound_to_a_value_fails_when_called(solution):
    assert solution.sub(5, 3) == 2
    solution.become_a_number()
    with pytest.raises(TypeError, match="not callable"):
        solution.sub(5, 3)
''',
}


@pytest.mark.docker
def test_the_harness_asks_once_whether_a_name_is_callable(sandbox: Sandbox) -> None:
    graded = sandbox.grade(COUNTING, mode="run", tests=TESTS)
    assert graded.outcome == "passed", graded.describe()
    assert len(graded.result.tests) == 3
