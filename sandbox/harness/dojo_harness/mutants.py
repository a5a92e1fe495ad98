"""Batch mode: many mutants of a rung's reference, graded in one container.

A mutant is the reference with one small change (``exercises.mutation``
makes them on the host). It comes from trusted code, so one container may
grade a whole batch; each mutant is still graded as a Submit grades a
learner's code: the hidden tests against it in one learner process, then,
when they all pass, each test again in a fresh process (state kept between
calls fails a Submit). Two differences make it fast without changing a
verdict: a run stops at the first failing test (a mutant is killed by one),
and each run has its own time limit.

That limit is on CPU time, per test, and comes from the reference itself,
graded first in this container: ``time_factor`` times the wall time each
test took with the reference (never less than its CPU time), at least
``min_time_s``. A mutant that spends more is killed by timeout, as mutation
testing tools count it; counting CPU time, not wall time, means a busy
machine slows the analysis down but never kills a mutant that is merely
waiting for a core. The wall clock still gives each test the rung's
``limits.time_s``.

One ``test`` event per mutant: ``name`` is the mutant's id, ``outcome`` is
``passed`` when it survived, else ``failed``, ``error`` or ``timeout``;
``message`` starts with the job outcome a learner would have got (``failed:``,
``timeout:``, ``memory_limit:``...).

A mutant that loops ends itself: a trailer appended to its source (after
every line of the mutant, so none moves) starts a thread that ends the
process once it has used its CPU-time limit; the fork server reports that
end and the next mutant goes on. When a test runs out of wall time instead
(a mutant that hangs without computing, or one stuck while being imported,
before the trailer ran), or the fork server is gone, the launcher kills
every learner process and starts a new server, as before a Submit's re-run.
Only when the launcher cannot does the batch stop there (report outcome
``error``): the host then starts a fresh container for the rest.
"""

from __future__ import annotations

import gc
import socket
import sys
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .jobio import TEST_DIR, Emitter, OutputTap, oom_kills
from .launcher import LauncherClient
from .plugin import HarnessPlugin, RunState, all_passed, not_failed, run_tests
from .proxy import Channel, ChannelBroken, LearnerDied, ServerDied

MAX_MUTANTS = 5000
MAX_DETAIL = 1000
# Appended to every mutant: a thread that ends the process once it has used
# that much CPU time. (An ITIMER_PROF alarm would be simpler, but this
# kernel does not deliver it.) A loop in C that holds the GIL starves the
# thread: the test's wall-clock limit and the launcher catch that one.
SELF_LIMIT = """

def _dojo_cpu_limit(seconds):  # appended by the grader: a mutant that loops forever ends itself
    import os, threading, time

    deadline = time.process_time() + seconds

    def watch():
        while time.process_time() < deadline:
            time.sleep(0.05)
        os._exit(124)

    threading.Thread(target=watch, daemon=True).start()


_dojo_cpu_limit({seconds!r})
"""
CPU_LIMIT_EXIT = 124
# Each test's wall-clock limit: this many times its time with the reference, at least WALL_FLOOR_S.
WALL_FACTOR = 20.0
WALL_FLOOR_S = 5.0
# A run stops at the first failing test (one is enough to kill a mutant), and
# prints no tracebacks: nobody reads them, and formatting them costs time.
PYTEST_ARGS = ["-x", "--tb=no"]


class CalibrationFailed(Exception):
    """The reference fails its own tests in this batch: no mutant can be judged by them."""


# eq=False: pytest registers the plugin by identity (a hashable object).
@dataclass(eq=False)
class _PerTest:
    """A pytest plugin: each test gets the wall deadline and, with a process per test, its own CPU limit; times each test."""

    plugin: HarnessPlugin
    source: str
    limits: dict[str, float]
    walls: dict[str, float]
    default_s: float
    fresh: bool
    durations: dict[str, float] = field(default_factory=dict)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
        self.plugin.channel.deadline = time.monotonic() + self.walls.get(item.name, self.default_s)
        if self.fresh:
            # This test's own learner process ends itself after this much CPU time.
            self.plugin.source = self.source + SELF_LIMIT.format(seconds=self.limits.get(item.name, self.default_s))
        began = time.monotonic()
        try:
            return (yield)
        finally:
            self.durations[item.name] = time.monotonic() - began
            if not self.plugin.state.timed_out:
                # Time to end the shared process cleanly after the last test.
                self.plugin.channel.deadline = time.monotonic() + self.default_s


class _Batch:
    def __init__(self, launcher: LauncherClient, control: socket.socket, flood: threading.Event, taps: tuple[OutputTap, ...], time_s: float) -> None:
        self.launcher = launcher
        self.control = control
        self.flood = flood
        self.taps = taps
        self.time_s = time_s
        # CPU seconds per test, from the reference's own runs (``calibrate``); else ``time_s``.
        self.limits: dict[str, float] = {}
        # Wall-clock seconds per test, likewise.
        self.walls: dict[str, float] = {}
        self.preloaded = set(sys.modules)

    def stop(self) -> str | None:
        return "output flood" if self.flood.is_set() else None

    def run(self, source: str, *, fresh: bool) -> tuple[RunState, dict[str, float]]:
        """One run of the tests (shared process, or one per test); its state and each test's wall time."""
        channel = Channel(self.control, deadline=time.monotonic() + self.time_s, abort=self.flood)
        # The shared process serves every test: its CPU limit is all of theirs.
        total = sum(self.limits.values()) if self.limits else self.time_s
        plugin = HarnessPlugin(channel, source + SELF_LIMIT.format(seconds=total), fresh=fresh, stop=self.stop)
        per_test = _PerTest(plugin, source, self.limits, self.walls, self.time_s, fresh)
        try:
            state = run_tests(str(TEST_DIR), plugin, PYTEST_ARGS, extra_plugins=[per_test])
        finally:
            self.forget_test_modules()
        if state.learner_died is None and not channel.server_alive():
            state.learner_died = ServerDied(None)
        return state, per_test.durations

    def reset(self) -> bool:
        """Kill every learner process and start a new fork server; False when the launcher cannot."""
        self.control.close()
        try:
            self.control = self.launcher.reset()
        except Exception:  # noqa: BLE001 - no new server: this container cannot grade on
            return False
        return True

    def forget_test_modules(self) -> None:
        """The next run imports the tests (and ``reference``) afresh, as a new job would."""
        for name in [name for name in sys.modules if name not in self.preloaded]:
            path = getattr(sys.modules[name], "__file__", None) or ""
            if path and Path(path).is_relative_to(TEST_DIR):
                del sys.modules[name]

    def calibrate(self, reference: str, factor: float, floor: float) -> str:
        """Grade the reference both ways; each test's CPU limit becomes ``factor`` times its slower wall time, within [floor, time_s]."""
        slowest: dict[str, float] = {}
        for fresh in (True, False):
            state, durations = self.run(reference, fresh=fresh)
            failing = [f"{r.name} {r.outcome}: {(r.message or str((r.failure or {}).get('code', '')))[:300]}" for r in state.tests.values() if not not_failed(r.outcome)]
            if state.timed_out or state.import_error or state.learner_died or not state.tests or failing:
                reason = state.import_error or str(state.learner_died or "") or "; ".join(failing[:2]) or "no test ran"
                raise CalibrationFailed(f"the reference itself does not pass here ({'alone' if fresh else 'shared'} run): {reason}"[:1500])
            for name, seconds in durations.items():
                slowest[name] = max(slowest.get(name, 0.0), seconds)
        self.limits = {name: round(min(self.time_s, max(floor, factor * seconds)), 2) for name, seconds in slowest.items()}
        self.walls = {name: round(min(self.time_s, max(WALL_FLOOR_S, WALL_FACTOR * seconds)), 2) for name, seconds in slowest.items()}
        return f"per-test CPU limits {min(self.limits.values()):g}-{max(self.limits.values()):g} s, wall {min(self.walls.values()):g}-{max(self.walls.values()):g} s"

    def grade(self, source: str) -> tuple[str, str, bool]:
        """(outcome, detail, learner still usable) of one mutant.

        A Submit passes only when the tests pass in one shared process and
        each alone in a fresh one; a failure in either fails it. The fresh
        run goes first here: it kills most mutants, and a test that hangs
        then costs only its own limit and its own process.
        """
        self.flood.clear()
        for tap in self.taps:
            tap.total = 0
        baseline_ooms = oom_kills()
        state, _ = self.run(source, fresh=True)
        alone = True
        if not self._fatal(state) and not state.collect_errors and all_passed(state.tests.values()):
            state, _ = self.run(source, fresh=False)
            alone = False
        new_ooms = oom_kills() - baseline_ooms
        failing = [r for r in sorted(state.tests.values(), key=lambda r: r.order) if not not_failed(r.outcome)]
        cpu_limit = isinstance(state.learner_died, LearnerDied) and state.learner_died.exitcode == CPU_LIMIT_EXIT
        if state.timed_out:
            slow = failing[0].name if failing else ""
            outcome, detail = "timeout", f"{slow or 'a test'} did not finish within {self.walls.get(slow, self.time_s):g} s"
        elif cpu_limit:
            outcome, detail = "timeout", f"{failing[0].name if failing else 'a test'} used more than its CPU time limit"
        elif self.flood.is_set():
            outcome, detail = "output_limit", "printed more than the output cap"
        elif new_ooms > 0:
            outcome, detail = "memory_limit", "ran out of memory"
        elif state.import_error is not None:
            outcome, detail = "error", state.import_error
        elif state.learner_died is not None:
            outcome, detail = "error", str(state.learner_died)
        elif state.collect_errors or not state.tests:
            outcome, detail = "infra_error", "the tests could not be collected: " + "; ".join(state.collect_errors)
        elif failing:
            where = "alone in a fresh process" if alone else "after the others in one process (it passes alone: state kept between calls)"
            outcome, detail = "failed", f"{failing[0].name} {failing[0].outcome} {where}"
        else:
            outcome, detail = "passed", ""
        # A learner process still busy, a server gone or junk on a channel: start over.
        stale = state.timed_out or self.flood.is_set() or isinstance(state.learner_died, ServerDied | ChannelBroken) or not self.control_alive()
        usable = self.reset() if stale else True
        return outcome, detail[:MAX_DETAIL], usable

    def control_alive(self) -> bool:
        return Channel(self.control, deadline=time.monotonic() + 1).server_alive()

    def _fatal(self, state: RunState) -> bool:
        return state.timed_out or self.flood.is_set() or state.learner_died is not None or state.import_error is not None


def _event_outcome(outcome: str) -> str:
    return {"passed": "passed", "failed": "failed", "timeout": "timeout"}.get(outcome, "error")


def run_batch(payload: dict[str, Any], emitter: Emitter, launcher: LauncherClient, control: socket.socket, flood: threading.Event,
              taps: tuple[OutputTap, ...]) -> dict[str, Any]:
    """Grade ``payload["mutants"]`` ([{"id", "source"}]) in order, one ``test`` event each; return the report's fields."""
    started = time.monotonic()
    # pytest collects garbage at the end of every run, over torch's whole
    # object graph: frozen, that costs a fifth (180 to 38 ms CPU a run).
    gc.freeze()
    time_s = float(dict(payload.get("limits") or {}).get("time_s", 10))
    mutants = list(payload.get("mutants") or [])[:MAX_MUTANTS]
    batch = _Batch(launcher, control, flood, taps, time_s)
    try:
        calibration = batch.calibrate(str(payload.get("reference") or ""), float(payload.get("time_factor") or 10), float(payload.get("min_time_s") or 1))
    except CalibrationFailed as exc:
        # Every mutant would be "killed" by tests that fail anyway: grade none, say why.
        return {"outcome": "infra_error", "message": str(exc), "tests": [], "run_s": round(time.monotonic() - started, 3)}
    graded = 0
    stopped = ""
    for mutant in mutants:
        began = time.monotonic()
        outcome, detail, usable = batch.grade(str(mutant["source"]))
        emitter.emit("test", name=str(mutant["id"]), outcome=_event_outcome(outcome), duration_s=round(time.monotonic() - began, 4),
                     message=f"{outcome}: {detail}" if detail else outcome)
        graded += 1
        if not usable:
            stopped = outcome
            break
    return {
        "outcome": "passed" if graded == len(mutants) else "error",
        "message": f"graded {graded} of {len(mutants)} mutants; {calibration}"
        + (f"; stopped after a mutant's {stopped}: a fresh container grades the rest" if stopped else ""),
        "tests": [],
        "run_s": round(time.monotonic() - started, 3),
    }
