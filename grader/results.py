"""What a learner may see of a sandbox result, and the one writer of test rows.

``present`` is the only place that decides what of a ``JobResult`` reaches a
learner; grading, live updates and rejudges all go through it, and
``write_test_rows`` / ``write_live_test_rows`` are the only writers of
``SubmissionTestResult``.

The rules, for a Submit (hidden tests):

- a hidden test shows the author's description when it fails, nothing when
  it passes; the harness's own text goes to ``detail``, for staff only;
- the summary is a fixed text per outcome (the page shows
  ``messages.OUTCOME_SUMMARY``, and an error adds
  ``SUBMIT_ERROR_AFTER_HIDDEN_CALL``): no exit status and no exception text
  once a hidden test has called the learner's code. Only an error raised
  before any hidden call (an import or syntax error at load) is shown as it is;
- stdout and stderr are dropped: they could carry what the learner's code
  learned about hidden inputs;
- per-test durations are withheld, and peak memory and timings are
  coarsened: they cannot carry a byte per test (see ``MEMORY_BUCKET``).

Every string is made safe to store first: NUL removed, invalid Unicode
replaced (the runner does the same; this is the last line before the
database).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

from exercises.constants import GpuNeed, gpu_need
from sandbox.jobs import MAX_BIGINT, CaseResult, JobResult, SpeedFacts, planned_tests

from . import messages
from .constants import Kind, Outcome
from .models import Submission, SubmissionTestResult

# Peak memory after a Submit is shown in buckets this large (rounded up): a
# 1 GiB limit then gives 16 values per Submit, not 2**30.
MEMORY_BUCKET = 64 * 1024 * 1024


def safe_text(text: str, limit: int | None = None) -> str:
    """``text`` without NUL and with invalid Unicode (lone surrogates) replaced."""
    cleaned = str(text).replace("\x00", "").encode("utf-8", errors="replace").decode("utf-8")
    return cleaned if limit is None else cleaned[:limit]


@dataclass(frozen=True)
class ShownTest:
    """One test as stored and shown: ``message`` for the learner, ``detail`` for staff."""

    name: str
    outcome: str
    duration_s: float
    message: str
    detail: str
    hidden: bool

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Graded:
    """A result as the learner may see it (and as it is stored)."""

    outcome: str
    message: str
    error_code: str
    stdout: str
    stderr: str
    tests: list[ShownTest]
    peak_memory_bytes: int | None
    timings: dict[str, Any]
    # Where it was graded (sandbox.report.parse_machine: bounded text already).
    machine: dict[str, Any] = field(default_factory=dict)


class DescribesHiddenTests(Protocol):
    """A rung version: its test files, and what its author says about each hidden test."""

    visible_tests: str
    hidden_tests: str

    def hidden_description(self, test_name: str) -> str: ...


# Outcomes after which the harness stopped early: tests it never reached are listed as not run.
STOPPED_EARLY = {Outcome.TIMEOUT, Outcome.MEMORY_LIMIT, Outcome.OUTPUT_LIMIT}


def _not_run(tests: list[ShownTest], *, kind: str, version: DescribesHiddenTests) -> list[ShownTest]:
    seen = {test.name for test in tests}
    planned = planned_tests(version.hidden_tests if kind == Kind.SUBMIT else version.visible_tests)
    return [ShownTest(name, "skipped", 0.0, messages.NOT_RUN, "", hidden=kind == Kind.SUBMIT) for name in planned if name not in seen]


def _where_it_stopped(tests: Sequence[ShownTest]) -> str:
    stuck = next((test.name for test in tests if test.outcome == "timeout"), None)
    if stuck is not None:
        return messages.STUCK_IN_TEST.format(name=stuck)
    return "" if any(test.outcome != "skipped" for test in tests) else messages.STUCK_UNKNOWN


# Failure codes of the test whose process the kernel killed when the memory limit hit.
KILLED_CODES = frozenset({"learner_died", "server_died"})


def _memory_hit_in(cases: list[CaseResult], *, kind: str, version: DescribesHiddenTests) -> tuple[list[CaseResult], str]:
    """The test that was running when the memory limit hit, and the cases with it:
    the one whose process was killed, else (the whole container was killed, so no
    test reported it) the first planned test without a result, added as failed."""
    killed = next((case.name for case in cases if case.outcome != "passed" and case.failure is not None and case.failure.code in KILLED_CODES), "")
    if killed:
        return cases, killed
    seen = {case.name for case in cases}
    planned = planned_tests(version.hidden_tests if kind == Kind.SUBMIT else version.visible_tests)
    running = next((name for name in planned if name not in seen), "")
    return ([*cases, CaseResult(name=running, outcome="failed", duration_s=0.0)] if running else cases), running


def present_test(case: CaseResult, *, kind: str, version: DescribesHiddenTests, leaked: bool = False, passes_alone: bool = False) -> ShownTest:
    """One test of a Run or a Submit as the learner may see it; ``leaked``: its
    outcome depended on the tests before it (``passes_alone``: it passed on its own)."""
    name = safe_text(case.name, 200)
    text = messages.failure_text(case.failure, case.message)
    if kind != Kind.SUBMIT:
        return ShownTest(name, case.outcome, round(max(0.0, case.duration_s), 3), safe_text(text), "", hidden=False)
    message = "" if case.outcome == "passed" else version.hidden_description(case.name)
    detail = text
    if leaked:
        message = f"{message} {messages.STATE_LEAK_NOTE}".strip()
        detail = f"{messages.LEAK_PASSES_ALONE if passes_alone else messages.LEAK_FAILS_ALONE}\n\n{detail}".strip()
    # NOTE: duration 0 means "withheld"; a hidden test's time could encode its input.
    return ShownTest(name, case.outcome, 0.0, safe_text(message), safe_text(detail), hidden=True)


def _worded(case: CaseResult, *, loading: bool) -> CaseResult:
    """A test the time limit stopped, with its sentence (the harness gives the outcome alone)."""
    if case.outcome != Outcome.TIMEOUT or case.message:
        return case
    return replace(case, message=messages.TEST_TIMED_OUT_LOADING if loading else messages.TEST_TIMED_OUT)


def hidden_calls_made(result: JobResult) -> bool:
    """Whether a hidden test called the learner's code (the runner says True when unknown: the safe side)."""
    return result.hidden_calls_made


def summary_for(result: JobResult, kind: str) -> str:
    """The stored summary sentence of a result (the page adds the outcome's fixed text)."""
    if result.is_infra_error:
        return messages.infra_error(result.error_code)
    if kind != Kind.SUBMIT:
        if result.outcome in STOPPED_EARLY:
            return messages.limit_hit(result.outcome, result.stopped, result.limit)
        return safe_text(messages.failure_text(result.failure, result.message))
    if result.rerun_failure in messages.RERUN_FAILED:
        return messages.RERUN_FAILED[result.rerun_failure]
    if result.outcome == Outcome.ERROR:
        if not hidden_calls_made(result):
            # Raised while loading the learner's module: no hidden input exists yet.
            return safe_text(messages.failure_text(result.failure, result.message))
        return messages.SUBMIT_ERROR_AFTER_HIDDEN_CALL
    return ""


def _coarse_memory(peak: int | None) -> int | None:
    if peak is None:
        return None
    # Integer arithmetic (a float loses the low bits of a large peak), and
    # never past what the database column holds.
    return min(max(1, -(-peak // MEMORY_BUCKET)) * MEMORY_BUCKET, MAX_BIGINT // MEMORY_BUCKET * MEMORY_BUCKET)


def present(result: JobResult, *, kind: str, version: DescribesHiddenTests) -> Graded:
    """Turn a sandbox result into what is stored and shown for a Run or a Submit."""
    leaks = set(result.state_leaks)
    cases = [_worded(case, loading=result.stopped == "loading") for case in result.tests]
    # Named, and its row says so, as a timeout's is (issue 59, item 5).
    cases, out_of_memory_in = _memory_hit_in(cases, kind=kind, version=version) if result.outcome == Outcome.MEMORY_LIMIT else (cases, "")
    alone = set(result.passes_alone)
    tests = [present_test(case, kind=kind, version=version, leaked=case.name in leaks, passes_alone=case.name in alone) for case in cases]
    if out_of_memory_in:
        tests = [replace(test, message=f"{test.message}\n\n{messages.TEST_HIT_MEMORY}".strip()) if test.name == out_of_memory_in else test for test in tests]
    submit = kind == Kind.SUBMIT
    message = summary_for(result, kind)
    if out_of_memory_in:
        message = f"{message} {messages.MEMORY_IN_TEST.format(name=out_of_memory_in)}".strip()
    if result.outcome in STOPPED_EARLY:
        if not submit and result.outcome == Outcome.TIMEOUT and result.stopped != "loading":
            message = f"{message} {_where_it_stopped(tests)}".strip()
        tests += _not_run(tests, kind=kind, version=version)
    timings: dict[str, Any] = dict(result.timings)
    if submit:
        timings = {key: round(value) if isinstance(value, float) else value for key, value in timings.items()}
    if ran_without_its_gpu(result, version):
        message = f"{message} {messages.CPU_FALLBACK_NOTE}".strip()
    outcome = result.outcome
    if submit and result.speed is not None and outcome == Outcome.PASSED:
        # A speed-graded rung passes only at its target; any other verdict says which (issue 60).
        message = f"{message} {messages.speed_sentence(result.speed)}".strip()
        timings["speed"] = speed_record(result.speed)
        if result.speed.verdict != "pass":
            outcome = Outcome.FAILED
    return Graded(
        outcome=outcome,
        message=message,
        error_code=safe_text(result.error_code, 40),
        stdout="" if submit else safe_text(result.stdout),
        stderr="" if submit else safe_text(result.stderr),
        tests=tests,
        peak_memory_bytes=_coarse_memory(result.peak_memory_bytes) if submit else result.peak_memory_bytes,
        timings=timings,
        machine=dict(result.machine),
    )


def speed_record(facts: SpeedFacts) -> dict[str, Any]:
    """A speed phase's facts as a Submission keeps them (``timings["speed"]``): ratios to
    two decimals, the per-call medians to a tenth of a millisecond, the phase's seconds whole."""

    def ratio(value: float | None) -> float | None:
        return None if value is None else round(value, 2)

    def call(value: float | None) -> float | None:
        return None if value is None else round(value, 4)

    return {
        "verdict": facts.verdict, "reason": facts.reason, "target": facts.target, "ratio": ratio(facts.ratio),
        "ci_low": ratio(facts.ci_low), "ci_high": ratio(facts.ci_high), "confidence": facts.confidence, "rounds": facts.rounds,
        "learner_s": call(facts.learner_s), "baseline_s": call(facts.baseline_s), "cpu_checked": facts.cpu_checked,
        "phase_s": round(facts.phase_s), "clock": facts.clock, "device": facts.device, "driver": facts.driver,
    }  # fmt: skip


def machine_line(machine: dict[str, Any]) -> str:
    """One line naming where a result was graded, e.g. "NVIDIA H200 · torch 2.13.0 · CUDA 12.8 · Python 3.11.2 · image ..."."""
    parts = [safe_text(str(machine["device"]), 120)] if machine.get("device") else []
    if machine.get("host_cpu") and machine.get("gpu") is not True:
        # The CPU model the worker read (sandbox.host): the machine kind a speed board files the result under.
        parts.append(safe_text(str(machine["host_cpu"]), 120))
    for key, label in (("torch", "torch"), ("cuda", "CUDA"), ("python", "Python"), ("image", "image")):
        if machine.get(key):
            parts.append(f"{label} {safe_text(str(machine[key]), 120)}")
    return " · ".join(parts)


def ran_without_its_gpu(result: JobResult, version: Any) -> bool:
    """A ``gpu: preferred`` rung graded where the harness saw no GPU: its GPU-only tests were skipped."""
    return gpu_need(getattr(version, "gpu", False)) == GpuNeed.PREFERRED and result.machine.get("gpu") is False


def write_test_rows(submission: Submission, tests: Sequence[ShownTest]) -> None:
    """Replace the submission's test rows with ``tests`` (its final grade)."""
    submission.test_results.all().delete()
    SubmissionTestResult.objects.bulk_create(
        SubmissionTestResult(
            submission=submission, order=order, name=test.name, outcome=test.outcome, duration_s=test.duration_s,
            message=test.message, detail=test.detail, hidden=test.hidden,
        )
        for order, test in enumerate(tests)
    )


def write_live_test_rows(submission: Submission, rows: Sequence[tuple[int, ShownTest]]) -> None:
    """Write the rows of tests that just finished (live updates), in one statement;
    the final grade replaces them all."""
    # One row per name (the last one said), as the unique constraint and
    # PostgreSQL's ON CONFLICT, which updates a row once per statement, want.
    latest = {test.name: (order, test) for order, test in rows}
    SubmissionTestResult.objects.bulk_create(
        [
            SubmissionTestResult(
                submission=submission, order=order, name=test.name, outcome=test.outcome, duration_s=test.duration_s,
                message=test.message, detail=test.detail, hidden=test.hidden,
            )
            for order, test in latest.values()
        ],
        update_conflicts=True,
        unique_fields=["submission", "name"],
        update_fields=["order", "outcome", "duration_s", "message", "detail", "hidden"],
    )


def shown_tests_from_dicts(rows: Sequence[dict[str, Any]], *, hidden: bool) -> list[ShownTest]:
    """Tests kept as JSON on a RejudgeResult, back as ``ShownTest`` (rows written before
    ``hidden`` was kept take it from the submission's kind)."""
    return [
        ShownTest(name=str(row["name"])[:200], outcome=str(row["outcome"]), duration_s=float(row.get("duration_s") or 0.0),
                  message=str(row.get("message", "")), detail=str(row.get("detail", "")), hidden=bool(row.get("hidden", hidden)))
        for row in rows
    ]
