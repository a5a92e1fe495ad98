"""Prove a rung in the real sandbox: the reference passes everything, the
starter and every wrong solution fail a hidden test, and at least one wrong
solution passes every visible test (so the hidden tests add something);
every alternative (an independent correct solution) passes every visible
test and every hidden test with each of CHECK_SEEDS, and the hidden tests
call the reference only inside the rung's declared domain
(``exercises.domain_guard``). Then measure the hidden tests: the share of the reference's mutants they
kill (``exercises.mutation``), reported beside the facts; publishing
compares it with MUTATION_MIN_SCORE, the catalog's own checks do not."""

from __future__ import annotations

import ast
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from sandbox.interface import Runner
from sandbox.jobs import JobResult, with_failure
from sandbox.pyparse import parse_python

from .constants import CHECK_SEEDS, DOMAIN_REQUIRED, MIN_ALTERNATIVES
from .domain_guard import COUNTS_TEST, MARKER, domain_test_source, parse_counts
from .jobs import job_for
from .loader import RungFiles
from .mutation import MutationReport, analyse_mutants
from .schema import domain_data


@dataclass(frozen=True)
class RungSource:
    """Rung content as validation needs it, from files or from a version row."""

    slug: str
    visible_tests: str
    hidden_tests: str
    reference: str
    starter: str
    wrong_solutions: dict[str, str]
    limits: dict[str, Any]
    gpu: str
    # Mutant id -> the author's reason it is equivalent to the reference.
    equivalent_mutants: dict[str, str] = field(default_factory=dict)
    # Independent correct solutions: name -> code.
    alternatives: dict[str, str] = field(default_factory=dict)
    # rung.yaml's ``domain:`` as plain JSON (``exercises.domain_guard``); empty when undeclared.
    domain: dict[str, Any] = field(default_factory=dict)
    # A speed-graded rung's speed phase (``loader.speed_payload``); empty for the others.
    # Only the speed facts' own jobs carry it: the other Submits check correctness.
    speed: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_files(cls, files: RungFiles) -> RungSource:
        return cls(
            slug=files.meta.slug,
            visible_tests=files.visible_tests,
            hidden_tests=files.hidden_tests,
            reference=files.reference,
            starter=files.starter,
            wrong_solutions=dict(files.wrong_solutions),
            limits=files.meta.limits.model_dump(mode="json"),
            gpu=files.meta.gpu,
            equivalent_mutants={mutant.id: mutant.reason for mutant in files.meta.equivalent_mutants},
            alternatives=dict(files.alternatives),
            domain=domain_data(files.meta),
            speed=files.speed_payload or {},
        )


@dataclass
class Fact:
    """One checked claim about a rung, with the evidence for it."""

    claim: str
    ok: bool
    evidence: str


@dataclass
class RungReport:
    rung: str
    visible_tests: int = 0
    hidden_tests: int = 0
    reference_passed: bool = False
    starter_failed_hidden: bool = False
    wrong_solutions: int = 0
    wrong_caught: int = 0
    wrong_passing_visible: int = 0
    alternatives: int = 0
    alternatives_passing: int = 0
    # Calls the hidden tests made outside the declared domain ("test: call: why").
    undocumented_calls: list[str] = field(default_factory=list)
    # Calls of the solution made by the generator tests (domain_guard.GENERATED_PREFIX) in the
    # guarded run; None when not counted (no domain, or the run did not report them).
    generated_cases: int | None = None
    seconds: float = 0.0
    facts: list[Fact] = field(default_factory=list)
    # What an author should look at but that does not fail the rung (an empty wrong solution...).
    warnings: list[str] = field(default_factory=list)
    # None when not measured (the reference fails, or the caller skipped it).
    mutation: MutationReport | None = None

    @property
    def ok(self) -> bool:
        return all(fact.ok for fact in self.facts)

    def summary(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("facts", "seconds", "mutation", "undocumented_calls", "warnings"):
            data.pop(key)
        empty = {"mutants": None, "killed": None, "equivalent": None, "mutation_score": None}
        # What did not hold, with its evidence: a JSON reader learns why a rung failed.
        failing = [{"claim": fact.claim, "evidence": fact.evidence} for fact in self.facts if not fact.ok]
        return {**data, **(self.mutation.summary() if self.mutation else empty), "failing": failing, "warnings": list(self.warnings)}


def _evidence(result: JobResult) -> str:
    failed = [test.name for test in result.tests if test.outcome not in ("passed", "skipped")]
    skipped = sum(test.outcome == "skipped" for test in result.tests)
    text = f"{result.outcome}: {len(result.tests) - len(failed) - skipped}/{len(result.tests)} tests passed"
    if skipped:
        text += f", {skipped} skipped (GPU-only where there is no GPU)"
    if failed:
        text += "; failing: " + ", ".join(failed[:6]) + (" ..." if len(failed) > 6 else "")
    if (reason := with_failure(result.message, result.failure)) and result.outcome not in ("passed", "failed"):
        text += f"; {reason[:300]}"
    return text


def _normalised(code: str) -> str | None:
    """The code's syntax tree as text (comments and layout left out); None when it does not parse."""
    try:
        return ast.dump(parse_python(code))
    except (SyntaxError, ValueError):
        return None


def _empty(code: str) -> bool:
    """No statement but docstrings and ``pass``."""
    return all(isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)) for node in parse_python(code).body)


def solution_warnings(source: RungSource) -> list[str]:
    """Wrong solutions (and alternatives) that prove nothing: empty, the reference itself, or a copy of another."""
    warnings: list[str] = []
    reference = _normalised(source.reference)
    for folder, solutions in (("wrong", source.wrong_solutions), ("alternatives", source.alternatives)):
        seen: dict[str, str] = {}
        for name, code in sorted(solutions.items()):
            tree = _normalised(code)
            if tree is None:
                continue
            if _empty(code):
                warnings.append(f"{folder}/{name} is empty")
            elif tree == reference:
                warnings.append(f"{folder}/{name} is the reference itself (the same code, comments and layout aside)")
            elif tree in seen:
                warnings.append(f"{folder}/{name} is the same code as {folder}/{seen[tree]} (comments and layout aside)")
            seen.setdefault(tree, name)
    return warnings


def _undocumented_calls(result: JobResult) -> list[str]:
    """The guard's reports in a guarded run's test messages, one line each."""
    found: list[str] = []
    for test in result.tests:
        for line in test.message.splitlines():
            at = line.find(MARKER)
            if at >= 0:
                text = line[at + len(MARKER) :].lstrip(": ")
                if text not in found:
                    found.append(text)
    return found


def domain_job(source: RungSource, seed: int = CHECK_SEEDS[0]) -> Any:
    """The reference graded by its hidden tests with every call judged by the declared domain.

    A Run-mode job (test messages come back, no isolated re-run) of the hidden
    tests with the guard appended (``domain_guard.domain_test_source``)."""
    job = job_for(source, "submit", source.reference, seed=seed)
    return replace(job, mode="run", tests={"test_hidden.py": domain_test_source(source.hidden_tests, source.domain)})


def validate_rung(source: RungSource, runner: Runner, *, parallel: int = 2, mutants: bool = True, stop_at: float | None = None) -> RungReport:
    """Grade the reference, the starter, each wrong solution and each alternative in the sandbox; then the mutants, unless ``mutants`` is False.

    Mutants not graded by ``stop_at`` (``time.monotonic()``) fail the grader-side fact.
    """
    started = time.monotonic()
    plan: list[tuple[str, str, str, int]] = [
        ("reference", "run", source.reference, 0),
        ("reference", "submit", source.reference, 0),
        ("starter", "submit", source.starter, 0),
    ]
    for name, code in sorted(source.wrong_solutions.items()):
        plan += [(f"wrong/{name}", "run", code, 0), (f"wrong/{name}", "submit", code, 0)]
    for name, code in sorted(source.alternatives.items()):
        plan += [(f"alternatives/{name}", "run", code, 0), *((f"alternatives/{name}", "submit", code, seed) for seed in CHECK_SEEDS)]
    jobs = [job_for(source, kind, code, seed=seed) for _, kind, code, seed in plan]
    if source.domain:
        plan.append(("reference", "domain", source.reference, CHECK_SEEDS[0]))
        jobs.append(domain_job(source))
    if source.speed:
        # The reference and each alternative must reach the speed target (issue 60).
        timed = [("reference", source.reference), *((f"alternatives/{name}", code) for name, code in sorted(source.alternatives.items()))]
        for who, code in timed:
            plan.append((who, "speed", code, CHECK_SEEDS[0]))
            jobs.append(replace(job_for(source, "submit", code, seed=CHECK_SEEDS[0]), speed=dict(source.speed)))
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        results = list(pool.map(runner.run, jobs))
    by_step = {(who, kind, seed): result for (who, kind, _, seed), result in zip(plan, results, strict=True)}

    report = RungReport(rung=source.slug, wrong_solutions=len(source.wrong_solutions), alternatives=len(source.alternatives))
    ref_run, ref_submit = by_step[("reference", "run", 0)], by_step[("reference", "submit", 0)]
    report.visible_tests, report.hidden_tests = len(ref_run.tests), len(ref_submit.tests)
    report.reference_passed = ref_run.outcome == "passed" and ref_submit.outcome == "passed"
    report.facts.append(Fact("the reference passes every visible test", ref_run.outcome == "passed", _evidence(ref_run)))
    report.facts.append(Fact("the reference passes every hidden test", ref_submit.outcome == "passed", _evidence(ref_submit)))
    starter = by_step[("starter", "submit", 0)]
    report.starter_failed_hidden = starter.outcome not in ("passed", "infra_error")
    report.facts.append(Fact("the starter fails at least one hidden test", report.starter_failed_hidden, _evidence(starter)))
    for name in sorted(source.wrong_solutions):
        hidden, visible = by_step[(f"wrong/{name}", "submit", 0)], by_step[(f"wrong/{name}", "run", 0)]
        caught = hidden.outcome not in ("passed", "infra_error")
        report.wrong_caught += caught
        report.wrong_passing_visible += visible.outcome == "passed"
        report.facts.append(Fact(f"wrong/{name} fails at least one hidden test", caught, _evidence(hidden)))
    report.facts.append(
        Fact(
            "at least one wrong solution passes every visible test (the hidden tests add something)",
            report.wrong_passing_visible >= 1,
            f"{report.wrong_passing_visible} of {report.wrong_solutions} wrong solutions pass the visible tests",
        )
    )
    report.facts.append(Fact("the rung ships at least three wrong solutions", report.wrong_solutions >= 3, f"{report.wrong_solutions} shipped"))
    _alternative_facts(source, by_step, report)
    _domain_facts(source, by_step, report)
    _speed_facts(source, by_step, report)
    report.warnings = solution_warnings(source)
    if mutants and report.reference_passed:
        report.mutation = analyse_mutants(source, runner, equivalent=source.equivalent_mutants, parallel=parallel, stop_at=stop_at)
    infra = [f"{who} ({kind})" for (who, kind, _), result in by_step.items() if result.outcome == "infra_error"]
    if report.mutation is not None and report.mutation.error:
        infra.append(f"mutants ({report.mutation.error[:300]})")
    report.facts.append(Fact("no job failed on the grader's side", not infra, ", ".join(dict.fromkeys(infra)) or "none"))
    report.seconds = round(time.monotonic() - started, 2)
    return report


def _alternative_facts(source: RungSource, by_step: dict[tuple[str, str, int], JobResult], report: RungReport) -> None:
    seeds = ", ".join(map(str, CHECK_SEEDS))
    for name in sorted(source.alternatives):
        visible = by_step[(f"alternatives/{name}", "run", 0)]
        hidden = {seed: by_step[(f"alternatives/{name}", "submit", seed)] for seed in CHECK_SEEDS}
        failing = [(seed, result) for seed, result in hidden.items() if result.outcome != "passed"]
        passes = visible.outcome == "passed" and not failing
        report.alternatives_passing += passes
        if visible.outcome != "passed":
            evidence = f"visible tests: {_evidence(visible)}"
        elif failing:
            evidence = "; ".join(f"hidden tests, seed {seed}: {_evidence(result)}" for seed, result in failing)
        else:
            evidence = f"visible: {_evidence(visible)}; hidden with seeds {seeds}: {_evidence(hidden[CHECK_SEEDS[0]])} each"
        report.facts.append(Fact(f"alternatives/{name} passes every visible test and every hidden test with seeds {seeds}", passes, evidence))
    report.facts.append(
        Fact(
            f"the rung ships at least {MIN_ALTERNATIVES} alternatives (independent correct solutions in alternatives/)",
            report.alternatives >= MIN_ALTERNATIVES,
            f"{report.alternatives} shipped",
        )
    )


def _speed_facts(source: RungSource, by_step: dict[tuple[str, str, int], JobResult], report: RungReport) -> None:
    if not source.speed:
        return
    for who in ["reference", *(f"alternatives/{name}" for name in sorted(source.alternatives))]:
        result = by_step[(who, "speed", CHECK_SEEDS[0])]
        speed = result.speed
        if result.outcome != "passed" or speed is None:
            evidence = _evidence(result) if result.outcome != "passed" else "no speed phase ran"
        else:
            evidence = f"{speed.verdict}: {speed.ratio}x the baseline ({speed.ci_low}x to {speed.ci_high}x) in {speed.rounds} rounds"
            evidence += f" ({speed.reason})" if speed.reason else ""
        ok = result.outcome == "passed" and speed is not None and speed.verdict == "pass"
        report.facts.append(Fact(f"{who} reaches the speed target ({source.speed.get('min_ratio')}x the baseline)", ok, evidence))


def _domain_facts(source: RungSource, by_step: dict[tuple[str, str, int], JobResult], report: RungReport) -> None:
    claim = "no hidden test calls the reference outside its declared domain (testing undocumented behaviour)"
    if not source.domain:
        if DOMAIN_REQUIRED:
            report.facts.append(Fact(claim, False, "rung.yaml declares no domain: add a domain: section (docs/authoring.md, \"Documented domain\")"))
        return
    guarded = by_step[("reference", "domain", CHECK_SEEDS[0])]
    report.undocumented_calls = _undocumented_calls(guarded)
    # The counting test fails on purpose to carry its figures back; every other test must pass.
    tests = [test for test in guarded.tests if test.name != COUNTS_TEST]
    counts = next((parse_counts(test.message) for test in guarded.tests if test.name == COUNTS_TEST), None)
    report.generated_cases = counts["generated"] if counts is not None else None
    clean = guarded.outcome == "passed" or (
        guarded.outcome == "failed" and counts is not None and all(test.outcome in ("passed", "skipped") for test in tests)
    )
    if report.undocumented_calls:
        shown = report.undocumented_calls[:6]
        evidence = "; ".join(shown) + (f" (and {len(report.undocumented_calls) - 6} more)" if len(report.undocumented_calls) > 6 else "")
        report.facts.append(Fact(claim, False, evidence))
    elif not clean:
        report.facts.append(Fact(claim, False, f"the reference, guarded by its domain: {_evidence(guarded)}"))
    else:
        report.facts.append(Fact(claim, True, f"{len(tests)} hidden tests ran with every call inside the domain or a documented bad input"))
