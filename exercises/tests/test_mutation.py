"""Mutation testing of a rung's hidden tests: mutants of the reference from
Cosmic Ray's operators, stable ids, the score, and the rung.yaml key that
marks equivalent mutants."""

from __future__ import annotations

import inspect
import re
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from exercises.exceptions import CatalogError
from exercises.loader import read_rung
from exercises.mutation import analyse_mutants, generate_mutants
from exercises.schema import MUTANT_ID_PATTERN, RungMeta
from sandbox.jobs import CaseResult, Job, JobResult

CLAMP = textwrap.dedent(
    """\
    def clamp(x, low, high):
        if x < low:
            return low
        if x > high:
            return high
        return x
    """
)


def test_every_mutant_is_one_compilable_change_with_a_unique_id_and_a_diff() -> None:
    mutants = generate_mutants(CLAMP)
    assert len(mutants) >= 10
    assert len({mutant.id for mutant in mutants}) == len(mutants)
    assert len({mutant.source for mutant in mutants}) == len(mutants)
    for mutant in mutants:
        assert re.match(MUTANT_ID_PATTERN, mutant.id), mutant.id
        assert mutant.source != CLAMP
        compile(mutant.source, "solution.py", "exec")
        assert mutant.diff.startswith("--- a/reference.py\n+++ b/reference.py\n@@")
        changed = [line for line in mutant.diff.splitlines()[2:] if line[:1] in "+-"]
        assert len(changed) == 2 and changed[0][0] == "-" and changed[1][0] == "+", mutant.diff
        assert mutant.function == "clamp" and 2 <= mutant.line <= 6
    operators = {mutant.operator for mutant in mutants}
    assert {"core/ReplaceComparisonOperator_Lt_LtE", "core/ReplaceComparisonOperator_Gt_GtE", "core/AddNot"} <= operators


def test_operators_are_replaced_within_their_family_only() -> None:
    mutants = generate_mutants("def f(a, b):\n    if a == b:\n        return a + b\n    return a * b\n")
    changes = {mutant.operator.split("_", 1)[1] for mutant in mutants if "_" in mutant.operator}
    assert {"Add_Sub", "Mul_FloorDiv", "Eq_NotEq", "Eq_Lt"} <= changes
    # Never arithmetic to bitwise, nor equality to identity (``a is b`` on small ints: equivalent).
    assert not [change for change in changes if re.search(r"Bit|Shift|_Is", change)], changes


def test_ids_do_not_change_when_unrelated_lines_of_the_reference_do() -> None:
    before = {mutant.id: mutant.diff.splitlines()[-3:] for mutant in generate_mutants(CLAMP)}
    edited = '"""Clamp a value."""\n\nLIMIT = 10\n\n\n' + CLAMP + "\n\ndef double(x):\n    return 2 * x\n"
    after = {mutant.id for mutant in generate_mutants(edited)}
    assert set(before) <= after


def test_the_same_change_twice_in_one_function_gets_two_ids() -> None:
    mutants = generate_mutants("def f(x):\n    x = x + 1\n    x = x + 1\n    return x\n")
    ids = [mutant.id for mutant in mutants if mutant.operator == "core/ReplaceBinaryOperator_Add_Sub"]
    assert len(ids) == 2 and ids[1] == ids[0] + "-2"


def test_annotations_are_not_mutated_but_the_code_beside_them_is() -> None:
    reference = textwrap.dedent(
        """\
        from __future__ import annotations

        def pick(a: int | None = 1 | 2, *, b: list[int] | None = None) -> int | None:
            c: int | None = a
            return c | 4
        """
    )
    mutants = generate_mutants(reference)
    changed = [line for mutant in mutants for line in mutant.diff.splitlines()[2:] if line.startswith("+")]
    # Only the two value expressions: the default ``1 | 2`` and ``c | 4``, never an ``X | None``.
    assert any("= 1 & 2" in line for line in changed) and any("return c & 4" in line for line in changed)
    assert not [line for line in changed if re.search(r"int\]? [&^]|int\]? <<|int\]? >>", line)], changed
    for mutant in mutants:  # the occurrence still points at the right place
        assert mutant.source.count("| None") == 4, mutant.diff


def test_a_mutant_whose_except_catches_nothing_still_runs() -> None:
    reference = "def parse(text):\n    try:\n        return int(text)\n    except ValueError:\n        return None\n"
    (mutant,) = [m for m in generate_mutants(reference) if m.operator == "core/ExceptionReplacer"]
    module = types.ModuleType("solution")
    exec(compile(mutant.source, "solution.py", "exec"), module.__dict__)
    assert module.parse("7") == 7
    with pytest.raises(ValueError):
        module.parse("seven")  # the handler no longer catches it
    assert "class CosmicRayTestingException" in mutant.source and "class CosmicRayTestingException" not in mutant.diff


class InProcessRunner:
    """Grades a job in this process: enough for the score's arithmetic (the sandbox path has its own tests)."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []

    def run(self, job: Job) -> JobResult:
        self.jobs.append(job)
        solution = types.ModuleType("solution")
        exec(compile(job.source, "solution.py", "exec"), solution.__dict__)
        tests = []
        for source in job.tests.values():
            namespace: dict[str, Any] = {}
            exec(compile(source, "test_hidden.py", "exec"), namespace)
            for name, test in namespace.items():
                if name.startswith("test_") and inspect.isfunction(test):
                    try:
                        test(solution)
                    except Exception as exc:  # noqa: BLE001 - a failing test
                        tests.append(CaseResult(name=name, outcome="failed", message=str(exc)))
                    else:
                        tests.append(CaseResult(name=name, outcome="passed"))
        return JobResult(outcome="passed" if all(test.outcome == "passed" for test in tests) else "failed", tests=tests)


class Rung:
    visible_tests = "def test_visible(solution):\n    assert solution.add(2, 3) == 5\n"
    reference = "def add(a, b):\n    return a + b\n"
    limits: dict[str, Any] = {"time_s": 10}
    gpu = False

    def __init__(self, hidden: str) -> None:
        self.hidden_tests = hidden


WEAK = "def test_doubles(solution):\n    assert solution.add(2, 2) == 4\n\n\ndef test_zero(solution):\n    assert solution.add(0, 0) == 0\n"


def test_the_score_is_killed_over_mutants_less_equivalent_ones() -> None:
    runner = InProcessRunner()
    report = analyse_mutants(Rung(WEAK), runner, equivalent={})
    # a + b -> a - b, a * b, a / b, a // b, a % b, a ** b: 2 * 2 == 2 + 2 and 0 * 0 == 0 + 0, so a * b survives.
    assert (report.mutants, report.killed, report.equivalent) == (6, 5, 0)
    assert report.mutation_score == round(5 / 6, 4)
    (survivor,) = report.surviving
    assert survivor["operator"] == "core/ReplaceBinaryOperator_Add_Mul" and "+    return a * b" in survivor["diff"]
    assert [job.mode for job in runner.jobs] == ["submit"] * 6 and all(job.tests == {"test_hidden.py": WEAK} for job in runner.jobs)

    killed = next(m.id for m in generate_mutants(Rung.reference) if m.operator.endswith("Add_Sub"))
    marked = {survivor["id"]: "pretend it cannot be told apart", killed: "wrongly marked", "AddNot-0123abcd": "gone"}
    report = analyse_mutants(Rung(WEAK), InProcessRunner(), equivalent=marked)
    assert (report.mutants, report.killed, report.equivalent, report.mutation_score) == (6, 5, 1, 1.0)
    assert report.surviving == [] and report.killed_equivalent == [killed] and report.stale_equivalent == ["AddNot-0123abcd"]
    assert report.summary() == {"mutants": 6, "killed": 5, "equivalent": 1, "mutation_score": 1.0}


def test_a_reference_with_nothing_to_mutate_scores_one() -> None:
    class Constant(Rung):
        reference = "def name():\n    return 'dojo'\n"

    report = analyse_mutants(Constant("def test_name(solution):\n    assert solution.name() == 'dojo'\n"), InProcessRunner(), equivalent={})
    assert (report.mutants, report.mutation_score) == (0, 1.0)


def _meta(**extra: Any) -> dict[str, Any]:
    return {"slug": "add", "title": "Add", "minutes": 5, "difficulty": "easy", "hidden_tests": {"test_a": {"description": "A."}}, **extra}


def test_rung_yaml_lists_equivalent_mutants_with_a_reason() -> None:
    meta = RungMeta.model_validate(_meta(equivalent_mutants=[{"id": "ReplaceComparisonOperator_Lt_LtE-1a2b3c4d", "reason": "never equal"}]))
    assert meta.equivalent_mutants[0].reason == "never equal"
    assert RungMeta.model_validate(_meta()).equivalent_mutants == []
    for bad in (
        [{"id": "AddNot-1a2b3c4d"}],  # no reason
        [{"id": "AddNot-1a2b3c4d", "reason": ""}],
        [{"id": "not an id", "reason": "x"}],
        [{"id": "AddNot-1a2b3c4d", "reason": "x", "note": "unknown key"}],
        [{"id": "AddNot-1a2b3c4d", "reason": "x"}, {"id": "AddNot-1a2b3c4d", "reason": "y"}],  # twice
    ):
        with pytest.raises(ValidationError):
            RungMeta.model_validate(_meta(equivalent_mutants=bad))


def _rung_folder(tmp_path: Path, **meta: Any) -> Path:
    folder = tmp_path / "01-add"
    (folder / "wrong").mkdir(parents=True)
    (folder / "rung.yaml").write_text(yaml.safe_dump(_meta(**meta)))
    for name, text in {"instructions.md": "# Add\n", "starter.py": "def add(a, b):\n    pass\n", "reference.py": Rung.reference,
                       "test_visible.py": Rung.visible_tests, "test_hidden.py": "def test_a(solution):\n    assert solution.add(1, 2) == 3\n"}.items():
        (folder / name).write_text(text)
    return folder


def test_marking_a_mutant_changes_the_content_hash_and_a_rung_without_the_key_keeps_its_hash(tmp_path: Path) -> None:
    import hashlib
    import json

    plain = read_rung(_rung_folder(tmp_path / "a"))
    # The hash as it was computed before rung.yaml had equivalent_mutants: unchanged for every such rung.
    meta = plain.meta.model_dump(mode="json")
    del meta["equivalent_mutants"]
    del meta["senior"]  # ladder placement, never part of the hash
    del meta["hints"]  # nor hints: a rung without them keeps its hash too
    del meta["alternatives"], meta["domain"]  # nor alternatives and a domain (issue 58)
    del meta["speed"]  # nor a speed section (issue 60)
    payload = {"meta": meta, "instructions": plain.instructions, "starter": plain.starter, "reference": plain.reference,
               "visible_tests": plain.visible_tests, "hidden_tests": plain.hidden_tests, "wrong_solutions": plain.wrong_solutions}
    assert plain.content_hash == hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    marked = read_rung(_rung_folder(tmp_path / "b", equivalent_mutants=[{"id": "AddNot-1a2b3c4d", "reason": "x"}]))
    assert marked.content_hash != plain.content_hash  # a Check before the mark is stale after it
    with pytest.raises(CatalogError, match="equivalent_mutants"):
        read_rung(_rung_folder(tmp_path / "c", equivalent_mutants=[{"id": "AddNot-1a2b3c4d"}]))
