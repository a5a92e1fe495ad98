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

Like the real runner, it believes a pass only when the result's tests bear
it out (``sandbox.vouch``). ``job_result("passed")``'s one placeholder test
stands for every test the job plans, so a test that just wants a pass gets
one; a result that names its tests is checked as it is.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

from .interface import EventCallback
from .jobs import CaseResult, Job, JobResult, planned_tests
from .vouch import vouch

Grader = Callable[[Job], JobResult]
# The one test of ``job_result()`` when none is given.
PLACEHOLDER_TEST = "test_ok"


def job_result(outcome: str = "passed", tests: Sequence[CaseResult] | None = None, **fields: Any) -> JobResult:
    """A result as the runner returns it; ``tests`` defaults to one test with ``outcome``."""
    if tests is None:
        tests = [] if outcome in ("error", "infra_error") else [CaseResult(name=PLACEHOLDER_TEST, outcome="passed" if outcome == "passed" else "failed")]
    fields.setdefault("timings", {"run_s": 0.01, "total_s": 0.02})
    return JobResult(outcome=outcome, tests=list(tests), **fields)


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
        result = vouch(_as_planned(self._grade(job), job), job)
        if on_event is not None:
            for test in result.tests:
                on_event("test", {"name": test.name, "outcome": test.outcome, "duration_s": test.duration_s, "message": test.message, "failure": test.failure})
            if job.isolate:
                on_event("rerun", {})  # as the harness does once a Submit's first run is over
        return result

    def stop(self, container_id: str) -> None:
        self.stopped.append(container_id)

    @classmethod
    def by_rules(cls, passes: Callable[[Job], set[str]]) -> FakeRunner:
        """Grades by rules: the job's tests named in ``passes(job)`` pass, the others fail."""

        def grade(job: Job) -> JobResult:
            names = job.planned_tests
            passing = passes(job)
            tests = [CaseResult(name=name, outcome="passed" if name in passing else "failed", message="" if name in passing else "assert False")
                     for name in names]
            return job_result("passed" if all(test.outcome == "passed" for test in tests) else "failed", tests)

        return cls(grade)

    @classmethod
    def in_process(cls) -> FakeRunner:
        """Runs the job's tests in this process with the learner's module as the ``solution`` fixture."""
        return cls(_run_in_process)


def _as_planned(result: JobResult, job: Job) -> JobResult:
    """A pass with only the placeholder test, as a pass of every test the job plans."""
    if result.outcome != "passed" or [test.name for test in result.tests] != [PLACEHOLDER_TEST] or not job.planned_tests:
        return result
    return dataclasses.replace(result, tests=[CaseResult(name=name, outcome="passed") for name in job.planned_tests])


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
            for name in planned_tests(source):
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
