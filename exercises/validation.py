"""Prove a rung in the real sandbox: the reference passes everything, the
starter and every wrong solution fail a hidden test, and at least one wrong
solution passes every visible test (so the hidden tests add something).
Then measure the hidden tests: the share of the reference's mutants they
kill (``exercises.mutation``), reported beside the facts; publishing
compares it with MUTATION_MIN_SCORE, the catalog's own checks do not."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from sandbox.interface import Runner
from sandbox.jobs import JobResult

from .jobs import job_for
from .loader import RungFiles
from .mutation import MutationReport, analyse_mutants


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
    seconds: float = 0.0
    facts: list[Fact] = field(default_factory=list)
    # None when not measured (the reference fails, or the caller skipped it).
    mutation: MutationReport | None = None

    @property
    def ok(self) -> bool:
        return all(fact.ok for fact in self.facts)

    def summary(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("facts", "seconds", "mutation"):
            data.pop(key)
        empty = {"mutants": None, "killed": None, "equivalent": None, "mutation_score": None}
        # What did not hold, with its evidence: a JSON reader learns why a rung failed.
        failing = [{"claim": fact.claim, "evidence": fact.evidence} for fact in self.facts if not fact.ok]
        return {**data, **(self.mutation.summary() if self.mutation else empty), "failing": failing}


def _evidence(result: JobResult) -> str:
    failed = [test.name for test in result.tests if test.outcome not in ("passed", "skipped")]
    skipped = sum(test.outcome == "skipped" for test in result.tests)
    text = f"{result.outcome}: {len(result.tests) - len(failed) - skipped}/{len(result.tests)} tests passed"
    if skipped:
        text += f", {skipped} skipped (GPU-only where there is no GPU)"
    if failed:
        text += "; failing: " + ", ".join(failed[:6]) + (" ..." if len(failed) > 6 else "")
    if result.message and result.outcome not in ("passed", "failed"):
        text += f"; {result.message[:300]}"
    return text


def validate_rung(source: RungSource, runner: Runner, *, parallel: int = 2, mutants: bool = True, stop_at: float | None = None) -> RungReport:
    """Grade the reference, the starter and each wrong solution in the sandbox; then the mutants, unless ``mutants`` is False.

    Mutants not graded by ``stop_at`` (``time.monotonic()``) fail the grader-side fact.
    """
    started = time.monotonic()
    plan: list[tuple[str, str, str]] = [
        ("reference", "run", source.reference),
        ("reference", "submit", source.reference),
        ("starter", "submit", source.starter),
    ]
    for name, code in sorted(source.wrong_solutions.items()):
        plan += [(f"wrong/{name}", "run", code), (f"wrong/{name}", "submit", code)]
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        results = list(pool.map(lambda step: runner.run(job_for(source, step[1], step[2])), plan))
    by_step = {(who, kind): result for (who, kind, _), result in zip(plan, results, strict=True)}

    report = RungReport(rung=source.slug, wrong_solutions=len(source.wrong_solutions))
    ref_run, ref_submit = by_step[("reference", "run")], by_step[("reference", "submit")]
    report.visible_tests, report.hidden_tests = len(ref_run.tests), len(ref_submit.tests)
    report.reference_passed = ref_run.outcome == "passed" and ref_submit.outcome == "passed"
    report.facts.append(Fact("the reference passes every visible test", ref_run.outcome == "passed", _evidence(ref_run)))
    report.facts.append(Fact("the reference passes every hidden test", ref_submit.outcome == "passed", _evidence(ref_submit)))
    starter = by_step[("starter", "submit")]
    report.starter_failed_hidden = starter.outcome not in ("passed", "infra_error")
    report.facts.append(Fact("the starter fails at least one hidden test", report.starter_failed_hidden, _evidence(starter)))
    for name in sorted(source.wrong_solutions):
        hidden, visible = by_step[(f"wrong/{name}", "submit")], by_step[(f"wrong/{name}", "run")]
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
    if mutants and report.reference_passed:
        report.mutation = analyse_mutants(source, runner, equivalent=source.equivalent_mutants, parallel=parallel, stop_at=stop_at)
    infra = [f"{who} ({kind})" for (who, kind), result in by_step.items() if result.outcome == "infra_error"]
    if report.mutation is not None and report.mutation.error:
        infra.append(f"mutants ({report.mutation.error[:300]})")
    report.facts.append(Fact("no job failed on the grader's side", not infra, ", ".join(infra) or "none"))
    report.seconds = round(time.monotonic() - started, 2)
    return report
