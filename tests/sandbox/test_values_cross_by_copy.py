"""Arguments and results cross to the learner's process as copies.

A test that checks its own tensor after a call, or changes a list it got
back, would see nothing of what the learner's code did: such a test cannot
fail. ``grading.assert_arguments_unchanged``, ``grading.by_reference`` and
``grading.call_by_reference`` check what it means to check, in a Run and in a Submit (whose re-run
replays each test's replies, the changed-argument list included).
"""

from __future__ import annotations

import textwrap

import pytest

from sandbox.jobs import Mode
from tests.security.support import Graded, Sandbox

TESTS = textwrap.dedent(
    """
    import torch
    from grading import assert_arguments_unchanged, assert_equal, by_reference, call_by_reference


    def test_scale_leaves_its_input(solution):
        x = torch.tensor([1.0, 2.0, 3.0])
        before = x.clone()
        got = solution.scale(x, factor=2.0)
        assert torch.equal(got, torch.tensor([2.0, 4.0, 6.0]))
        assert torch.equal(x, before)  # always true here: the test's x never left this process
        assert_arguments_unchanged(solution, "scale")


    def test_tally_leaves_its_lists(solution):
        counts = {"a": [1, 2]}
        assert_equal(solution.tally(counts, extra=[3]), 6, "tally")
        assert_arguments_unchanged(solution, "tally")


    def test_history_hands_out_a_copy(solution):
        keeper = solution.Keeper()
        keeper.add(3.0)
        history = by_reference(keeper, "history")
        history.append(1000.0)
        history.clear()
        assert_equal(keeper.history, [3.0], "history after the caller changed the list it got")


    def test_table_hands_out_a_copy(solution):
        keeper = solution.Keeper()
        keeper.add(5.0)
        table = call_by_reference(keeper, "table", 2)
        table.append(9.0)
        assert_equal(keeper.table(2), [5.0, 5.0], "table after the caller changed the list it got")
    """
)

CORRECT = textwrap.dedent(
    """
    def scale(x, factor):
        return x * factor

    def tally(counts, extra):
        return sum(sum(v) for v in counts.values()) + sum(extra)

    class Keeper:
        def __init__(self):
            self._history = []

        def add(self, value):
            self._history.append(value)

        @property
        def history(self):
            return list(self._history)

        def table(self, times):
            self._table = [value for value in self._history for _ in range(times)]
            return list(self._table)
    """
)

# Each changes one thing a caller holds: the tensor, a list inside a dict
# passed by position, a list passed by keyword, and internal state handed out.
CHANGES_TENSOR = CORRECT.replace("return x * factor", "return x.mul_(factor)")
CHANGES_NESTED = CORRECT.replace("return sum(sum(v)", "counts['a'].append(0)\n    return sum(sum(v)")
CHANGES_KEYWORD = CORRECT.replace("+ sum(extra)", "+ sum(extra) + (extra.clear() or 0)")
HANDS_OUT_STATE = CORRECT.replace("return list(self._history)", "return self._history")
HANDS_OUT_TABLE = CORRECT.replace("return list(self._table)", "return self._table").replace(
    "self._table = [value", "self._table = getattr(self, '_table', None) or [value"
)


def _outcomes(graded: Graded) -> dict[str, tuple[str, str]]:
    return {test.name.split("::")[-1]: (test.outcome, test.message) for test in graded.result.tests}


@pytest.mark.docker
@pytest.mark.parametrize("mode", ["run", "submit"])
def test_a_correct_solution_passes_every_check(sandbox: Sandbox, mode: Mode) -> None:
    graded = sandbox.grade(CORRECT, mode=mode, tests={"test_copies.py": TESTS})
    assert graded.outcome == "passed", graded.describe()


@pytest.mark.docker
@pytest.mark.parametrize(
    ("source", "failing", "says"),
    [
        (CHANGES_TENSOR, "test_scale_leaves_its_input", "scale changed its input in place (argument 1)"),
        (CHANGES_NESTED, "test_tally_leaves_its_lists", "tally changed its input in place (argument 1)"),
        (CHANGES_KEYWORD, "test_tally_leaves_its_lists", "tally changed its input in place (argument extra=)"),
        (HANDS_OUT_STATE, "test_history_hands_out_a_copy", "history after the caller changed the list it got"),
        (HANDS_OUT_TABLE, "test_table_hands_out_a_copy", "table after the caller changed the list it got"),
    ],
    ids=["tensor", "nested-list", "keyword", "internal-state", "method-result"],
)
def test_each_change_fails_its_own_test_only(sandbox: Sandbox, source: str, failing: str, says: str) -> None:
    graded = sandbox.grade(source, mode="submit", tests={"test_copies.py": TESTS})
    assert graded.outcome == "failed", graded.describe()
    outcomes = _outcomes(graded)
    assert outcomes[failing][0] == "failed", graded.describe()
    assert says in outcomes[failing][1], outcomes[failing]
    assert all(outcome == "passed" for name, (outcome, _) in outcomes.items() if name != failing), outcomes
