"""The documented-domain guard and its schema (issue 58), without Docker.

``test_validate_exercises`` shows the same guard reporting through the real
sandbox (validate_exercises, hence Check); here its rules, and the source it
appends to hidden tests, run in this process in milliseconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from pydantic import ValidationError

from exercises.domain_guard import COUNTS_TEST, MARKER, Guard, UndocumentedCall, domain_test_source, judge, parse_counts
from exercises.schema import EntryDomain
from exercises.validation import RungSource, solution_warnings

from .test_hidden_suites_stable import run_hidden

COUNTS = {
    "args": {
        "n": {"type": "int", "min": 1, "otherwise": "ValueError"},
        "k": {"type": "int", "min": 0, "bad": [{"type": "int", "max": -1, "raises": "ValueError"}]},
        "flag": {"type": "bool"},
    },
    "requires": [{"check": "n % 2 == 0", "raises": "ValueError"}, {"check": "k < 100"}],
}


def test_the_schema_names_what_it_refuses() -> None:
    for bad, words in (
        ({"args": {"n": {"type": "integer"}}}, "unknown type 'integer'"),
        ({"args": {"n": {"otherwise": "NoSuchError"}}}, "not a builtin exception"),
        ({"args": {"n": {"dtype": ["float33"]}}}, "unknown dtype"),
        ({"requires": [{"check": "n >"}]}, "not a Python expression"),
        ({"args": {"n": {"type": "int", "typo": 1}}}, "Extra inputs are not permitted"),
    ):
        with pytest.raises(ValidationError, match=words):
            EntryDomain.model_validate(bad)


@pytest.mark.parametrize(
    ("arguments", "kind"),
    [
        ({"n": 4, "k": 0, "flag": False}, "inside"),
        ({"n": 4}, "inside"),  # arguments left to their defaults are not judged
        ({"n": 0}, "bad"),  # otherwise: anything else raises
        ({"n": True}, "bad"),  # a bool is not an int
        ({"n": 4, "k": -3}, "bad"),  # a listed bad value
        ({"n": 4, "k": 2.0}, "undocumented"),  # outside, and no bad entry covers it
        ({"n": 4, "flag": 1}, "undocumented"),
        ({"n": 0, "k": 2.0}, "undocumented"),  # one undocumented argument makes the call undocumented
        ({"n": 3}, "bad"),  # requires with raises
        ({"n": 4, "k": 100}, "undocumented"),  # requires without raises
        ({"n": 4, "size": 1}, "undocumented"),  # an argument without a declared domain
    ],
)
def test_a_call_is_inside_a_documented_bad_input_or_undocumented(arguments: dict[str, object], kind: str) -> None:
    # The requires checks see the defaults (as Guard.call binds them); only passed arguments are judged.
    assert judge(COUNTS, arguments, context={"k": 0, "flag": False, **arguments}).kind == kind


def test_shape_symbols_bind_across_the_arguments_of_one_call() -> None:
    entry = {"args": {"q": {"type": "tensor", "dtype": ["float32"], "shape": ["B", "D"], "finite": True}, "k": {"type": "tensor", "shape": ["T", "D"]}},
             "requires": [{"check": "T >= B"}]}
    assert judge(entry, {"q": torch.zeros(2, 4), "k": torch.zeros(3, 4)}).kind == "inside"
    assert "D is 5 here but 4" in judge(entry, {"q": torch.zeros(2, 4), "k": torch.zeros(3, 5)}).why
    assert judge(entry, {"q": torch.zeros(4, 4), "k": torch.zeros(3, 4)}).kind == "undocumented"
    assert judge(entry, {"q": torch.tensor([[float("nan")]]), "k": torch.zeros(1, 1)}).kind == "undocumented"
    assert judge(entry, {"q": torch.zeros(2, 4, dtype=torch.float64)}).kind == "undocumented"


class _Counter:
    def __init__(self, n: int) -> None:
        self.n = n

    def add(self, k: int) -> int:
        if k < 0:
            raise ValueError("k < 0")
        return self.n + self.twice(k) // 2

    def twice(self, k: int) -> int:  # called by add itself: not a test's call
        return 2 * k


class _Reference:
    Counter = _Counter


def test_a_guarded_class_refuses_an_undocumented_call_that_except_exception_cannot_swallow() -> None:
    domain = {"Counter": {"args": {"n": {"type": "int"}}}, "Counter.add": {"args": {"k": {"type": "int", "bad": [{"type": "int", "max": -1, "raises": "ValueError"}]}}},
              "Counter.twice": {"args": {"k": {"type": "int", "min": 10}}}}
    reference = _Reference()
    guard = Guard(domain, reference)
    guard.wrap_reference(reference)
    counter = reference.Counter(1)
    assert counter.add(3) == 4  # add calls twice(3), outside twice's domain: the reference's own call is not judged
    with pytest.raises(ValueError):
        counter.add(-1)
    with pytest.raises(UndocumentedCall, match=r"Counter.add\(2.5\): argument k=2.5 type float is not int"):
        try:
            counter.add(2.5)  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - what a differential test does; the guard's refusal is not an Exception
            pytest.fail("an undocumented call was swallowed")
    assert len(guard.records) == 1
    wrapped = guard.wrap_solution(reference)
    with pytest.raises(UndocumentedCall, match=r"Counter\(1.0\)"):
        wrapped.Counter(1.0)


def test_a_documented_bad_input_the_reference_accepts_is_reported() -> None:
    class Lenient:
        @staticmethod
        def f(n: int) -> int:
            return n

    guard = Guard({"f": {"args": {"n": {"type": "int", "min": 1, "otherwise": "ValueError"}}}}, Lenient)
    with pytest.raises(UndocumentedCall, match=r"documented to raise ValueError .* the reference returned 0"):
        guard.call("f", Lenient.f, (0,), {})


HIDDEN = '''import pytest
import reference


def test_inside(solution):
    assert solution.add(1, 2) == 3


def test_documented_bad_input(solution):
    with pytest.raises(ValueError):
        solution.add(-1, 2)


def test_float(solution):
    with pytest.raises(Exception):
        solution.add(1.5, 2)


def test_swallowed(solution):
    try:
        reference.add(1, "x")
    except BaseException:
        pass


def test_undeclared(solution):
    assert solution.version() == 1  # no arguments: nothing to document
    solution.version(2)
'''


def test_the_appended_guard_fails_each_hidden_test_that_calls_outside_the_domain(tmp_path: Path) -> None:
    domain = {"add": {"args": {"a": {"type": "int", "bad": [{"type": "int", "max": -1, "raises": "ValueError"}]}, "b": {"type": "int"}}}}
    (tmp_path / "reference.py").write_text("def add(a, b):\n    if a < 0:\n        raise ValueError(a)\n    return a + b\n\n\ndef version(n=1):\n    return n\n")
    (tmp_path / "test_hidden.py").write_text(domain_test_source(HIDDEN, domain))
    plugin = run_hidden(tmp_path, 0)
    assert plugin.outcomes["test_inside"] == plugin.outcomes["test_documented_bad_input"] == "passed", plugin.messages
    assert plugin.outcomes["test_float"] == plugin.outcomes["test_swallowed"] == plugin.outcomes["test_undeclared"] == "failed", plugin.outcomes
    assert f"{MARKER}: test_float: add(1.5, 2): argument a=1.5 type float is not int" in plugin.messages["test_float"]
    assert f"{MARKER}: test_swallowed: add(1, 'x'): argument b='x' type str is not int" in plugin.messages["test_swallowed"]
    assert f"{MARKER}: test_undeclared: version(2): the domain declares no entry version" in plugin.messages["test_undeclared"]
    # The last test carries the calls of the generator tests back (none here: no test_generated_*).
    assert parse_counts(plugin.messages[COUNTS_TEST]) == {"generated": 0, "calls": {}}


def test_check_warns_about_empty_copied_and_duplicate_wrong_solutions() -> None:
    reference = "def add(a, b):\n    return a + b\n"
    source = RungSource(
        slug="add", visible_tests="", hidden_tests="", reference=reference, starter="", limits={}, gpu="no",
        wrong_solutions={"a_empty.py": '"""Nothing yet."""\n', "b_same.py": "def add(a, b):  # the reference\n    return a + b\n",
                         "c_minus.py": "def add(a, b):\n    return a - b\n", "d_minus_again.py": "def add(a,b):\n    return a-b\n"},
    )
    assert solution_warnings(source) == [
        "wrong/a_empty.py is empty",
        "wrong/b_same.py is the reference itself (the same code, comments and layout aside)",
        "wrong/d_minus_again.py is the same code as wrong/c_minus.py (comments and layout aside)",
    ]
