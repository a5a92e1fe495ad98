"""Grade mutants of a rung's reference in the sandbox, many per container.

The host side of the harness's batch mode (``dojo_harness.mutants``).
Mutants come from the rung's own reference, trusted code, so one container
grades a whole batch, each mutant as a Submit would grade it. A mutant that
hangs or eats memory is killed (``timeout``, ``memory_limit``), never an
infrastructure error: its container stops after it, and a fresh container
grades the rest. Only a container that cannot start, or Docker failing,
ends a batch with an error.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import docker.errors

from .jobs import OUTCOMES, Job, Limits
from .pool import launch
from .runner import SandboxRunner, _Watchdog

log = logging.getLogger(__name__)

# Job outcomes that kill a mutant: anything a learner's Submit would not pass with.
KILLING_OUTCOMES = frozenset({"failed", "error", "timeout", "memory_limit", "output_limit"})
# Containers in a row that may fail on our side before a batch gives up.
INFRA_RETRIES = 2
# The harness refuses payloads over 8 MiB; a batch stays well under it.
MAX_BATCH_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Mutant:
    id: str
    source: str


@dataclass(frozen=True)
class MutantBatch:
    """Mutants to grade against ``tests`` (the hidden tests, with the reference importable)."""

    mutants: Sequence[Mutant]
    tests: dict[str, str]
    reference: str
    limits: Limits
    # The longest a run of the tests may take for one mutant (a Submit runs them twice).
    time_s: float
    seed: int = 0
    # Each test's CPU-time limit: this many times its wall time with the
    # reference in the same container (graded first), at least ``min_time_s``.
    time_factor: float = 10.0
    min_time_s: float = 1.0


@dataclass(frozen=True)
class MutantVerdict:
    id: str
    # The outcome a learner's Submit of this code would get: ``passed`` means the mutant survived.
    outcome: str
    detail: str = ""
    duration_s: float = 0.0

    @property
    def killed(self) -> bool:
        return self.outcome in KILLING_OUTCOMES


@dataclass
class MutantRun:
    verdicts: list[MutantVerdict] = field(default_factory=list)
    containers: int = 0
    # Set when some mutants could not be graded (Docker or the harness failed, not a mutant).
    error: str = ""
    # What the harness said at the end of each container (the time limits it derived).
    notes: list[str] = field(default_factory=list)


def run_mutants(runner: SandboxRunner, batch: MutantBatch, *, stop_at: float | None = None) -> MutantRun:
    """Grade every mutant of ``batch``, starting a fresh container whenever one had to stop early.

    A container that fails on our side (Docker, a start-up timeout) is
    replaced too, up to INFRA_RETRIES times in a row; then the batch ends
    with ``error`` and the mutants left are not graded. So does reaching
    ``stop_at`` (``time.monotonic()``), the caller's own deadline.
    """
    run = MutantRun()
    pending = list(batch.mutants)
    failures = 0
    while pending:
        if stop_at is not None and time.monotonic() >= stop_at:
            run.error = f"out of time: {len(pending)} of {len(batch.mutants)} mutants not graded"
            break
        chunk = _chunk(pending)
        run.containers += 1
        verdicts, error, note = _grade_in_one_container(runner, batch, chunk, stop_at)
        run.notes += [note] if note else []
        run.verdicts += verdicts
        done = {verdict.id for verdict in verdicts}
        pending = [mutant for mutant in pending if mutant.id not in done]
        if not error and not verdicts:
            error = "a sandbox container graded no mutant"
        failures = failures + 1 if error else 0
        if failures > INFRA_RETRIES or isinstance(error, _Final):
            run.error = error
            break
        if error:
            log.warning("a mutant batch container failed (%s); starting another for the %d left", error[:200], len(pending))
    return run


def _chunk(pending: list[Mutant]) -> list[Mutant]:
    size, chunk = 0, list[Mutant]()
    for mutant in pending:
        size += len(mutant.source.encode()) + len(mutant.id) + 64
        if chunk and size > MAX_BATCH_BYTES:
            break
        chunk.append(mutant)
    return chunk


class _Final(str):
    """An error after which another container would fare no better (the
    caller's time is out, or the harness refused the batch): the batch ends.
    A type, so the batch never reads the error's words to decide."""

    __slots__ = ()


def _verdict(mutant_id: str, event: dict[str, Any]) -> MutantVerdict:
    message = str(event.get("message") or "")
    head, _, detail = message.partition(": ")
    outcome = head if head in OUTCOMES else {"passed": "passed", "failed": "failed", "timeout": "timeout"}.get(str(event.get("outcome")), "error")
    return MutantVerdict(id=mutant_id, outcome=outcome, detail=detail, duration_s=float(event.get("duration_s") or 0.0))


def _grade_in_one_container(
    runner: SandboxRunner, batch: MutantBatch, chunk: list[Mutant], stop_at: float | None = None
) -> tuple[list[MutantVerdict], str, str]:
    """The verdicts one container gave (in order), an error when it failed on our side, and the harness's last word."""
    job = Job(mode="submit", source="", tests=batch.tests, limits=batch.limits, seed=batch.seed, reference=batch.reference)
    started = time.monotonic()
    try:
        launched = launch(runner._client(), runner._options(job))
    except docker.errors.ImageNotFound:
        return [], f"sandbox image {runner.image} is not built", ""
    except docker.errors.DockerException as exc:
        return [], f"Docker is unavailable: {exc}"[:500], ""
    verdicts: list[MutantVerdict] = []
    by_id = {mutant.id: mutant for mutant in chunk}
    try:
        nonce = secrets.token_hex(16)
        payload = json.dumps({
            "nonce": nonce,
            "mode": "mutants",
            "mutants": [{"id": mutant.id, "source": mutant.source} for mutant in chunk],
            "tests": batch.tests,
            "reference": batch.reference,
            "seed": batch.seed,
            "limits": {"time_s": batch.time_s, "output_bytes": batch.limits.output_kb * 1024},
            "time_factor": batch.time_factor,
            "min_time_s": batch.min_time_s,
            "show_output": False,
            "isolate": True,
        }).encode()
        launched.send_job(payload)
        # Each mutant may take two runs of the tests; every verdict moves the deadline.
        budget = 2 * batch.time_s + runner.grace_s
        watchdog = _Watchdog(launched.container, runner.startup_s)

        def next_budget() -> float:
            # The caller's deadline, when sooner, stops the container too.
            return budget if stop_at is None else max(0.1, min(budget, stop_at - time.monotonic()))

        def on_event(kind: str, data: dict[str, Any]) -> None:
            if kind == "test" and data.get("name") in by_id and len(verdicts) < len(chunk):
                verdicts.append(_verdict(str(data["name"]), data))
                watchdog.restart(next_budget())

        try:
            report, harness_started_s = runner._read_events(launched, nonce, on_event, started, lambda: watchdog.restart(next_budget()))
        finally:
            watchdog.cancel()
        if report is not None and report.get("outcome") == "infra_error":
            return verdicts, _Final(f"the harness graded no mutant: {str(report.get('message') or '')[:1000]}"), ""
        if report is not None or len(verdicts) == len(chunk):
            return verdicts, "", str((report or {}).get("message") or "")[:500]
        if stop_at is not None and time.monotonic() >= stop_at:
            return verdicts, _Final("out of time"), ""
        # No report: the container was killed in the middle of a mutant (the
        # one after the last verdict), by our clock or by the memory limit.
        try:
            launched.container.wait(timeout=10)
        except Exception:  # noqa: BLE001 - a wait timeout is not a reason to lose the verdicts
            pass
        launched.container.reload()
        in_progress = chunk[len(verdicts)].id
        if watchdog.fired and harness_started_s is None:
            return verdicts, "the sandbox did not start in time", ""
        if watchdog.fired:
            verdicts.append(MutantVerdict(id=in_progress, outcome="timeout", detail="the container ran out of time", duration_s=budget))
            return verdicts, "", ""
        if launched.container.attrs.get("State", {}).get("OOMKilled"):
            verdicts.append(MutantVerdict(id=in_progress, outcome="memory_limit", detail="the container ran out of memory"))
            return verdicts, "", ""
        stderr = launched.container.logs(stdout=False, stderr=True, tail=20)[-2000:].decode("utf-8", "replace")
        return verdicts, f"the sandbox produced no report while grading mutants: {stderr}", ""
    except docker.errors.DockerException as exc:
        log.warning("a mutant batch failed on Docker: %s", exc)
        return verdicts, f"Docker failed while grading mutants: {exc}"[:500], ""
    finally:
        runner._finish(launched)
