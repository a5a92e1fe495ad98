"""The one fake runner every test uses where Docker is not the point.

``FakeRunner`` satisfies ``sandbox.interface.Runner``. It remembers each job
it was given, reports events the way the real runner does (container,
running, one ``test`` event per test) and grades in one of three ways:

- a fixed result, or a sequence of results returned in turn (the last one
  repeats): ``FakeRunner(job_result("infra_error", error_code=...))``;
- by rules, ``FakeRunner.by_rules(lambda job: {"test_a"})``: the job's test
  functions are found by name, those in the set pass;
- in this process, ``FakeRunner.in_process()``: the job's tests really run
  against the learner's module (no isolation at all: only for a suite's own
  tiny rungs).

Results carry ``hidden_calls_made`` (True unless the learner's module failed
to load), the field the real runner adds to ``JobResult`` for issue 14.
"""

from __future__ import annotations

import ast
import inspect
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

from .interface import EventCallback
from .jobs import CaseResult, Job, JobResult

Grader = Callable[[Job], JobResult]


def job_result(outcome: str = "passed", tests: Sequence[CaseResult] | None = None, **fields: Any) -> JobResult:
    """A result as the runner returns it; ``tests`` defaults to one test with ``outcome``."""
    if tests is None:
        tests = [] if outcome in ("error", "infra_error") else [CaseResult(name="test_ok", outcome="passed" if outcome == "passed" else "failed")]
    fields.setdefault("timings", {"run_s": 0.01, "total_s": 0.02})
    return JobResult(outcome=outcome, tests=list(tests), **fields)


def test_names(source: str) -> list[str]:
    """The top-level ``test_*`` functions of a test file, in order."""
    tree = ast.parse(source)
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]


test_names.__test__ = False  # type: ignore[attr-defined]  # pytest: a helper, not a test


class FakeRunner:
    """Stands in for ``SandboxRunner``; see the module docstring."""

    def __init__(self, grade: JobResult | Sequence[JobResult] | Grader | None = None) -> None:
        self.jobs: list[Job] = []
        self.stopped: list[str] = []
        self._grade: Grader
        if grade is None:
            self._grade = lambda job: job_result("passed")
        elif isinstance(grade, JobResult):
            fixed = grade
            self._grade = lambda job: fixed
        elif callable(grade):
            self._grade = grade
        else:
            queue = list(grade)
            if not queue:
                raise ValueError("FakeRunner needs at least one result")
            self._grade = lambda job: queue.pop(0) if len(queue) > 1 else queue[0]

    def run(self, job: Job, on_event: EventCallback | None = None) -> JobResult:
        self.jobs.append(job)
        if on_event is not None:
            on_event("container", {"id": f"fake-{len(self.jobs)}"})
            on_event("running", {})
        result = self._grade(job)
        if on_event is not None:
            for test in result.tests:
                on_event("test", {"name": test.name, "outcome": test.outcome, "duration_s": test.duration_s, "message": test.message})
            if job.isolate:
                on_event("rerun", {})  # as the harness does once a Submit's first run is over
        return result

    def stop(self, container_id: str) -> None:
        self.stopped.append(container_id)

    @classmethod
    def by_rules(cls, passes: Callable[[Job], set[str]]) -> FakeRunner:
        """Grades by rules: the job's tests named in ``passes(job)`` pass, the others fail."""

        def grade(job: Job) -> JobResult:
            names = [name for source in job.tests.values() for name in test_names(source)]
            passing = passes(job)
            tests = [CaseResult(name=name, outcome="passed" if name in passing else "failed", message="" if name in passing else "assert False")
                     for name in names]
            return job_result("passed" if all(test.outcome == "passed" for test in tests) else "failed", tests)

        return cls(grade)

    @classmethod
    def in_process(cls) -> FakeRunner:
        """Runs the job's tests in this process with the learner's module as the ``solution`` fixture."""
        return cls(_run_in_process)


def _run_in_process(job: Job) -> JobResult:
    solution = types.ModuleType("solution")
    saved = sys.modules.get("solution")
    tests: list[CaseResult] = []
    try:
        try:
            exec(compile(job.source, "solution.py", "exec"), solution.__dict__)
        except Exception as exc:  # noqa: BLE001 - the learner's code may raise anything
            return job_result("error", message=f"{type(exc).__name__}: {exc}", hidden_calls_made=False)
        sys.modules["solution"] = solution
        for filename, source in job.tests.items():
            namespace: dict[str, Any] = {}
            exec(compile(source, filename, "exec"), namespace)
            for name in test_names(source):
                wants = inspect.signature(namespace[name]).parameters
                try:
                    namespace[name](**({"solution": solution} if "solution" in wants else {}))
                except Exception as exc:  # noqa: BLE001 - a failing test
                    tests.append(CaseResult(name=name, outcome="failed", message=f"{type(exc).__name__}: {exc}"))
                else:
                    tests.append(CaseResult(name=name, outcome="passed"))
    finally:
        if saved is None:
            sys.modules.pop("solution", None)
        else:
            sys.modules["solution"] = saved
    return job_result("passed" if tests and all(test.outcome == "passed" for test in tests) else "failed", tests, timings={"run_s": 0.001})
