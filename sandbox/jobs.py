"""What a sandbox job is and what it returns: plain data, no Django."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from sandbox.pyparse import parse_python

Mode = Literal["run", "submit"]

OUTCOMES = ("passed", "failed", "error", "timeout", "memory_limit", "output_limit", "infra_error")
TEST_OUTCOMES = ("passed", "failed", "error", "skipped", "timeout")
RERUN_FAILURES = ("timeout", "error", "incomplete")
# Where a job that a limit stopped was (JobResult.stopped).
STOP_PLACES = ("loading", "processes", "results")
# Why the learner's code failed a test or a job, as the harness reports it
# (``Failure.code``): facts, never sentences; grader.messages words them.
# "unknown" stands for any code the host does not know (a forged report).
FAILURE_CODES = (
    "load_error",  # the module raised while loading (its traceback)
    "raised",  # a call raised (the test's message is the exception, its traceback here)
    "learner_died",  # the learner's process ended (exit status or signal; neither: it stopped answering)
    "server_died",  # the learner's code ended the fork server that runs it
    "channel_broken",  # the learner's code wrote junk on the grader's channel (detail: what)
    "value_too_large",  # a returned value too large to send back (detail: how large)
    "invalid_return",  # a returned value that is not plain data (detail: why)
    "unknown",
)

# Sizes stored or logged from a job, whatever the container printed.
MAX_STORED_OUTPUT = 64 * 1024
MAX_TEST_MESSAGE = 4000
MAX_TEST_NAME = 200
# The largest value the database's BigIntegerField holds (peak memory).
MAX_BIGINT = 2**63 - 1
MAX_TESTS = 500


@dataclass(frozen=True)
class Limits:
    """Resource limits of one job. The defaults are the safe ones."""

    time_s: float = 30
    memory_mb: int = 1024
    cpus: float = 1.0
    pids: int = 128
    tmpfs_mb: int = 64
    # Files and folders each tmpfs may hold: without a cap, millions of empty
    # files cost kernel memory that no size= limit counts.
    tmpfs_inodes: int = 8192
    output_kb: int = 1024
    nofile: int = 1024
    fsize_mb: int = 16
    gpu: bool = False

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, gpu: bool = False) -> Limits:
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        return cls(**{**known, "gpu": gpu or bool(known.get("gpu", False))})


@dataclass(frozen=True)
class Job:
    mode: Mode
    source: str
    tests: dict[str, str]
    limits: Limits = field(default_factory=Limits)
    # Seeds the hidden tests' generated inputs (``grading.job_seed()``); a
    # rejudge passes the submission's own seed, so every grade reproduces.
    seed: int = 0
    # The rung's reference solution, importable as ``reference`` by the tests
    # (harness side only) so they can compare the learner's code with it.
    reference: str = ""
    # A speed-graded rung's Submit (issue 60): what the harness measures once
    # every test passed: {"entry", "generator" (the rung's speed_inputs.py),
    # "sizes", "baseline" (its source), "min_ratio", "budget_s"}; None: no speed phase.
    speed: dict[str, Any] | None = None

    @property
    def show_output(self) -> bool:
        # Learner output is shown for Run only: during Submit it could carry
        # what the learner's code learned about hidden inputs.
        return self.mode == "run"

    @property
    def isolate(self) -> bool:
        return self.mode == "submit"

    @property
    def planned_tests(self) -> list[str]:
        """The test functions of this job's files, in order (``planned_tests``)."""
        return [name for source in self.tests.values() for name in planned_tests(source)]


# What a speed phase may conclude (the harness's ``speed.VERDICTS``), and why
# it concluded nothing or refused to (``SPEED_REASONS``).
SPEED_VERDICTS = ("pass", "fail", "ambiguous", "refused")
SPEED_REASONS = ("", "budget", "wrong_output", "learner_died", "raised", "processes")
# What a call's cost was read from: the container's CPU time (cgroup), the
# wall time alone (the cgroup unreadable, as under gVisor), the GPU (cuda).
SPEED_CLOCKS = ("cgroup", "wall", "cuda")


@dataclass(frozen=True)
class SpeedFacts:
    """A speed phase's result: ``ratio`` is the baseline's time over the
    learner's (the median of the rounds), ``ci_low``..``ci_high`` its
    interval at ``confidence``, ``target`` the ratio the rung asks for."""

    verdict: str
    reason: str = ""
    target: float = 1.0
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float = 0.0
    rounds: int = 0
    learner_s: float | None = None
    baseline_s: float | None = None
    cpu_checked: bool = False
    phase_s: float = 0.0
    # ``SPEED_CLOCKS``, "" when unknown; on cuda the GPU's name and driver.
    clock: str = ""
    device: str = ""
    driver: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Failure:
    """Why the learner's code failed, as facts (``FAILURE_CODES``).

    ``status``: the exit status its process ended with; ``signal``: the
    signal that killed it; ``traceback``: the learner's own traceback text
    (data, shown as it is); ``detail``: a short technical fact (what was
    written on the channel, a value's size).
    """

    code: str
    status: int | None = None
    signal: int | None = None
    traceback: str = ""
    detail: str = ""

    def brief(self) -> str:
        """A one-line technical summary for staff and authors' tools (not a learner sentence)."""
        facts = [f"status {self.status}" if self.status is not None else "", f"signal {self.signal}" if self.signal is not None else "", self.detail]
        text = self.code + "".join(f" ({fact})" for fact in facts if fact)
        return f"{text}: {self.traceback.strip().splitlines()[-1]}" if self.traceback.strip() else text


def with_failure(message: str, failure: Failure | None) -> str:
    """``message`` and the failure's technical summary, for staff and authors' tools
    (a learner reads grader.messages.failure_text instead)."""
    return "; ".join(part for part in (message, failure.brief() if failure else "") if part)


@dataclass(frozen=True)
class CaseResult:
    name: str
    outcome: str
    duration_s: float = 0.0
    message: str = ""
    failure: Failure | None = None


@dataclass
class JobResult:
    outcome: str
    message: str = ""
    tests: list[CaseResult] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    state_leaks: list[str] = field(default_factory=list)
    # Of ``state_leaks``, the tests that passed on their own in the re-run
    # and failed after the others; the rest passed only after the others.
    passes_alone: list[str] = field(default_factory=list)
    peak_memory_bytes: int | None = None
    timings: dict[str, float] = field(default_factory=dict)
    # Stable id of an infrastructure failure (ours, not the learner's).
    error_code: str = ""
    # False only when the learner's code never ran with a test's input (it
    # failed to load): then its error text can carry nothing hidden.
    hidden_calls_made: bool = True
    # An ``error`` that is the learner's module failing to load, and nothing
    # else (the harness says so): the one error after which a container may
    # serve another job (``sandbox.runner``).
    load_error: bool = False
    # A job a limit stopped: where it was (STOP_PLACES: "loading", its module
    # still loading; "processes", processes it started outlived the kill;
    # "results", its results outgrew the harness's memory; "" elsewhere or
    # unknown) and the limit it hit (seconds for a timeout, bytes for
    # output; 0 when not given). Facts, not sentences: grader.messages words them.
    stopped: str = ""
    limit: float = 0.0
    # Set when a Submit's isolated re-run failed: "timeout", "error" or
    # "incomplete" (RERUN_FAILURES); the outcome is then the re-run's.
    rerun_failure: str = ""
    # How many tests of a Submit's re-run were replayed to a fresh process
    # (their first run's calls, the same replies) or made no call to replay;
    # the others ran again for real (docs/security.md).
    rerun_replayed: int = 0
    # Where it ran (``sandbox.report.parse_machine``): device, torch, cuda,
    # python and image as short text, and ``gpu`` (a GPU was visible).
    machine: dict[str, Any] = field(default_factory=dict)

    # Why an ``error`` outcome's code failed (its module did not load, its
    # process ended...): the facts grader.messages words; None otherwise.
    failure: Failure | None = None
    # A speed-graded Submit's measurement (``sandbox.report.parse_speed``); None when none ran.
    speed: SpeedFacts | None = None

    @property
    def is_infra_error(self) -> bool:
        return self.outcome == "infra_error"


def _is_fixture(decorator: ast.expr) -> bool:
    # ``@pytest.fixture``, ``@fixture`` and either called with arguments.
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Attribute) and target.attr == "fixture") or (isinstance(target, ast.Name) and target.id == "fixture")


@lru_cache(maxsize=64)
def _planned(source: str) -> tuple[str, ...]:
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return ()
    return tuple(
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name.startswith("test_")
        and not any(_is_fixture(decorator) for decorator in node.decorator_list)
    )


def planned_tests(source: str) -> list[str]:
    """The top-level test functions a test file defines, in the order pytest
    runs them: none if it does not parse, and never a fixture named ``test_*``
    (pytest does not collect those). A parametrized one is reported as its
    cases, ``test_x[...]``; a method of a test class is not counted here."""
    return list(_planned(source))


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... truncated to {limit} characters ...]"
