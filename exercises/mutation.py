"""Mutation testing of a rung's hidden tests.

``generate_mutants`` makes every mutant of the reference that Cosmic Ray's
core operators make (each one small change: ``+`` to ``-``, ``<`` to
``<=``, a number plus one, a loop that never runs...). ``analyse_mutants``
grades each mutant against the hidden tests in the sandbox, exactly as a
learner's Submit of that code would be graded, and scores the tests by the
share of mutants they kill. A surviving mutant is a wrong solution the
hidden tests let through, unless it behaves exactly like the reference (an
*equivalent* mutant, which the author marks in rung.yaml with a reason).

A mutant's id is the operator and a hash of the lines it changes and the
function they are in, so it stays the same when unrelated lines of the
reference change.
"""

from __future__ import annotations

import difflib
import hashlib
import pickle
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Protocol

import cosmic_ray.plugins
from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.ast.ast_query import ASTQuery
from cosmic_ray.mutating import MutationVisitor
from cosmic_ray.operators.operator import Operator

from sandbox.jobs import Job, JobResult, with_failure
from sandbox.mutants import KILLING_OUTCOMES, Mutant, MutantBatch, MutantVerdict, run_mutants
from sandbox.runner import SandboxRunner

from .jobs import RungContent, job_for

# A mutant's CPU-time limit per test: this many times the test's wall time
# with the reference, timed in the same container just before, at least
# MIN_MUTANT_TIME_S (the wall clock keeps the rung's limit). A mutant that
# spends more is killed by timeout, as mutation testing tools count it.
MUTANT_TIME_FACTOR = 10.0
MIN_MUTANT_TIME_S = 1.0
# The ExceptionReplacer operator names an exception nothing raises; Cosmic
# Ray defines it in its own process, a mutant defines it itself.
_TESTING_EXCEPTION = "CosmicRayTestingException"
_TESTING_EXCEPTION_DEFINITION = f"\n\nclass {_TESTING_EXCEPTION}(Exception):\n    pass\n"


class JobRunner(Protocol):
    def run(self, job: Job) -> JobResult: ...


@dataclass(frozen=True)
class GeneratedMutant:
    id: str
    # Cosmic Ray's operator name, e.g. "core/ReplaceBinaryOperator_Add_Sub".
    operator: str
    occurrence: int
    line: int
    function: str
    source: str
    # Unified diff against reference.py.
    diff: str


# Operator replacements stay within a family: an arithmetic operator becomes
# another arithmetic one, a bitwise one another bitwise one, and equality or
# order never becomes identity (``x == 0`` to ``x is 0`` is equivalent for
# small ints, so authors would only have to mark it). Crossing families
# makes mutants any test kills, at the cost of a sandbox run each.
_FAMILIES = (
    frozenset({"Add", "Sub", "Mul", "Div", "FloorDiv", "Mod", "Pow"}),
    frozenset({"BitAnd", "BitOr", "BitXor", "LShift", "RShift"}),
    frozenset({"Eq", "NotEq", "Lt", "LtE", "Gt", "GtE", "In", "NotIn"}),
    frozenset({"Is", "IsNot"}),
)


def _selected(name: str) -> bool:
    kind, _, change = name.split("/", 1)[-1].partition("_")
    if kind not in ("ReplaceBinaryOperator", "ReplaceComparisonOperator"):
        return True
    before, _, after = change.partition("_")
    return any(before in family and after in family for family in _FAMILIES)


@cache
def _operators() -> tuple[tuple[str, Operator], ...]:
    """Cosmic Ray's core operators that need no arguments (its default set), replacements within a family."""
    found = []
    for name in cosmic_ray.plugins.operator_names():
        operator_class = cosmic_ray.plugins.get_operator(name)
        if not operator_class.arguments() and _selected(name):
            found.append((name, operator_class()))
    return tuple(sorted(found, key=lambda pair: pair[0]))


def _changed_lines(before: list[str], after: list[str]) -> tuple[int, list[str], list[str]]:
    """(first changed line, 1-based; removed lines; added lines), whitespace-stripped."""
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    first, removed, added = 0, [], []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        first = first or i1 + 1
        removed += [line.strip() for line in before[i1:i2]]
        added += [line.strip() for line in after[j1:j2]]
    return first, removed, added


def _compiles(source: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. "is" with a literal: legal, and the point of the mutant
        try:
            compile(source, "solution.py", "exec")
        except (SyntaxError, ValueError):
            return False
    return True


def _in_annotation(node: Any) -> bool:
    """Whether ``node`` is part of a type annotation (of a parameter, a return value or a variable)."""
    child, parent = node, node.parent
    while parent is not None:
        if parent.type == "tfpdef" and child is parent.children[-1] and len(parent.children) == 3:
            return True
        if parent.type == "annassign" and child is parent.children[1]:
            return True
        if parent.type == "funcdef":
            before = child.get_previous_sibling()
            return before is not None and before.type == "operator" and before.value == "->"
        child, parent = parent, parent.parent
    return False


def _positions(reference: str) -> Iterator[tuple[str, Operator, int, str]]:
    """(operator name, operator, occurrence, enclosing function) of every place an operator applies.

    Annotations are skipped: ``int | None`` turned into ``int & None`` is not
    behaviour (with ``from __future__ import annotations`` nothing even
    evaluates it), so such a mutant would only ever be marked equivalent. The
    occurrence still counts them: it is Cosmic Ray's index of the position.
    """
    nodes = list(ast_nodes(get_ast(reference)))
    for name, operator in _operators():
        occurrence = 0
        for node in nodes:
            for _position in operator.mutation_positions(node):
                if not _in_annotation(node):
                    yield name, operator, occurrence, ASTQuery(node).get_definition_name() or ""
                occurrence += 1


def _mutate(tree: bytes, operator: Operator, occurrence: int) -> str | None:
    """``cosmic_ray.mutating.mutate_code``, on a copy of a tree parsed once (unpickling is 4x faster than parsing)."""
    visitor = MutationVisitor(occurrence, operator)
    mutated = visitor.walk(pickle.loads(tree))  # our own pickle of our own parse, in this process
    return str(mutated.get_code()) if visitor.mutation_applied else None


def generate_mutants(reference: str) -> list[GeneratedMutant]:
    """Every distinct, compilable mutant of ``reference``, in operator and source order."""
    before = reference.splitlines()
    tree = pickle.dumps(get_ast(reference), protocol=pickle.HIGHEST_PROTOCOL)
    seen = {reference}
    taken: dict[str, int] = {}
    mutants = []
    for name, operator, occurrence, function in _positions(reference):
        mutated = _mutate(tree, operator, occurrence)
        if mutated is None or mutated in seen or not _compiles(mutated):
            continue
        seen.add(mutated)
        after = mutated.splitlines()
        line, removed, added = _changed_lines(before, after)
        short = name.split("/", 1)[-1]
        digest = hashlib.sha256("\n".join([short, function, *removed, "->", *added]).encode()).hexdigest()[:8]
        mutant_id = f"{short}-{digest}"
        taken[mutant_id] = taken.get(mutant_id, 0) + 1
        if taken[mutant_id] > 1:  # the same change to an identical line elsewhere in the function
            mutant_id = f"{mutant_id}-{taken[mutant_id]}"
        diff = "\n".join(difflib.unified_diff(before, after, "a/reference.py", "b/reference.py", n=2, lineterm=""))
        if _TESTING_EXCEPTION in mutated and _TESTING_EXCEPTION not in reference:
            mutated += _TESTING_EXCEPTION_DEFINITION
        mutants.append(GeneratedMutant(id=mutant_id, operator=name, occurrence=occurrence, line=line, function=function, source=mutated, diff=diff))
    return mutants


@dataclass
class MutationReport:
    mutants: int = 0
    killed: int = 0
    equivalent: int = 0
    # What the sandbox derived per container: the time limits of each run.
    limits: list[str] = field(default_factory=list)
    containers: int = 0
    seconds: float = 0.0
    # [{"id", "operator", "line", "function", "diff"}] of live mutants not marked equivalent, by line.
    surviving: list[dict[str, Any]] = field(default_factory=list)
    # Marked equivalent in rung.yaml, yet no such mutant exists (the reference changed) or the tests kill it.
    stale_equivalent: list[str] = field(default_factory=list)
    killed_equivalent: list[str] = field(default_factory=list)
    # Mutants that could not be graded (Docker or the harness failed): the score counts them as surviving.
    ungraded: int = 0
    error: str = ""

    @property
    def mutation_score(self) -> float:
        """killed / (mutants - equivalent); 1.0 when there is nothing to kill."""
        scored = self.mutants - self.equivalent
        return round(self.killed / scored, 4) if scored > 0 else 1.0

    def summary(self) -> dict[str, Any]:
        return {"mutants": self.mutants, "killed": self.killed, "equivalent": self.equivalent, "mutation_score": self.mutation_score}

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.summary(),
            "limits": self.limits,
            "containers": self.containers,
            "seconds": self.seconds,
            "surviving": self.surviving,
            "stale_equivalent": self.stale_equivalent,
            "killed_equivalent": self.killed_equivalent,
            "ungraded": self.ungraded,
            "error": self.error,
        }


def _grade_in_sandbox(runner: SandboxRunner, content: RungContent, mutants: Sequence[GeneratedMutant], parallel: int, seed: int,
                      report: MutationReport, stop_at: float | None = None) -> list[MutantVerdict]:
    """Verdicts from batches in ``parallel`` containers at a time (their count, notes and first error go to ``report``)."""
    job = job_for(content, "submit", "", seed=seed)
    groups = [list(mutants[index::parallel]) for index in range(max(1, parallel))]
    batches = [
        MutantBatch(mutants=[Mutant(m.id, m.source) for m in group], tests=job.tests, reference=job.reference, limits=job.limits,
                    time_s=job.limits.time_s, seed=seed, time_factor=MUTANT_TIME_FACTOR, min_time_s=MIN_MUTANT_TIME_S)
        for group in groups if group
    ]
    with ThreadPoolExecutor(max_workers=max(1, len(batches))) as pool:
        runs = list(pool.map(lambda batch: run_mutants(runner, batch, stop_at=stop_at), batches))
    report.containers = sum(run.containers for run in runs)
    report.limits = [note for run in runs for note in run.notes]
    report.error = next((run.error for run in runs if run.error), "")
    return [verdict for run in runs for verdict in run.verdicts]


def _grade_one_job_each(runner: JobRunner, content: RungContent, mutants: Sequence[GeneratedMutant], seed: int) -> list[MutantVerdict]:
    """Any other runner (tests use an in-process one): one Submit job per mutant."""
    verdicts = []
    for mutant in mutants:
        result = runner.run(job_for(content, "submit", mutant.source, seed=seed))
        failing = next((f"{test.name} {test.outcome}" for test in result.tests if test.outcome != "passed"), "")
        verdicts.append(MutantVerdict(id=mutant.id, outcome=result.outcome, detail=failing or with_failure(result.message, result.failure)[:300]))
    return verdicts


def analyse_mutants(
    content: RungContent,
    runner: JobRunner,
    *,
    equivalent: Mapping[str, str],
    parallel: int = 2,
    seed: int = 0,
    stop_at: float | None = None,
) -> MutationReport:
    """Grade every mutant of ``content.reference`` against the hidden tests; ``equivalent`` maps ids to the author's reasons.

    Mutants not graded by ``stop_at`` (``time.monotonic()``) are reported in ``ungraded`` and ``error``.
    """
    started = time.monotonic()
    mutants = generate_mutants(content.reference)
    report = MutationReport(mutants=len(mutants))
    if isinstance(runner, SandboxRunner):
        verdicts = _grade_in_sandbox(runner, content, mutants, parallel, seed, report, stop_at)
    else:
        verdicts = _grade_one_job_each(runner, content, mutants, seed)
    by_id = {verdict.id: verdict for verdict in verdicts}
    for mutant in sorted(mutants, key=lambda m: (m.line, m.operator, m.occurrence)):
        verdict = by_id.get(mutant.id)
        if verdict is None or verdict.outcome not in KILLING_OUTCOMES | {"passed"}:
            report.ungraded += 1
            if verdict is not None and not report.error:
                report.error = f"{mutant.id}: {verdict.outcome}: {verdict.detail}"[:500]
        elif verdict.killed:
            report.killed += 1
            if mutant.id in equivalent:
                report.killed_equivalent.append(mutant.id)
        elif mutant.id in equivalent:
            report.equivalent += 1
        else:
            report.surviving.append({"id": mutant.id, "operator": mutant.operator, "line": mutant.line, "function": mutant.function, "diff": mutant.diff})
    report.stale_equivalent = sorted(set(equivalent) - {mutant.id for mutant in mutants})
    if report.ungraded and not report.error:
        report.error = f"{report.ungraded} mutant(s) could not be graded"
    report.seconds = round(time.monotonic() - started, 2)
    return report
