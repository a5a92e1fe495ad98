"""The speed phase of a Submit whose rung grades speed (issue 60).

It runs only after every correctness test passed, with the job's own CPU
quota and pinning. Each **round** gives the learner's code and the rung's
baseline the same fresh inputs, each in a fresh learner process of the same
fork server (the same kind of process: the baseline's source is loaded in a
process of its own and never enters the learner's): one to two warm-up calls,
then one timed call, and the process ends (the server kills whatever it left
and deletes its files before the next process starts). Which goes first is
drawn per round, so the two interleave, A B B A A B...

**Time** is taken here, outside the learner's process: the wall time of the
timed call, from sending it until its reply came back, and, read from outside
too, the CPU the container spent in that call and a short grace after it (the
cgroup's ``cpu.stat``, less this process's own CPU). A call costs its CPU
time (its wall time if shorter, for work spread over several CPUs, but
never less than the CPU time over all the job's CPUs: ``Sample.charged``),
so work left running after a call returned (threads, child processes)
counts, time spent waiting for a CPU the host's other work holds does not,
and patching the clocks in the learner's process changes nothing. Where the
cgroup's figure cannot be read (gVisor shows no ``/sys/fs/cgroup``) a call
costs its wall time, and the result says so (``clock``: ``wall``). Where the
container sees a GPU the clock is ``cuda`` (``gpu_timing``): the L2 cache
flushed from here before each timed call, the device synchronised around it
and CUDA events in the learner's process, a call costing the larger of its
wall time and the events' span; the result names the device and its driver.
**Outputs** of every call, warm-up
and timed, are compared with the baseline's on the same inputs: a cache, a
special case or a lazy answer that is wrong fails the measurement.

The verdict comes from the paired ratios baseline / learner of each round
(their logarithms): the median and its distribution-free confidence interval
(order statistics of the binomial, ``CONFIDENCE``). Once the interval lies
above the target it is a pass, below it a fail; when the budget ends first it
is ``ambiguous``, said as such. The result is facts only: the host words them.
"""

from __future__ import annotations

import math
import os
import random
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .gpu_timing import L2Flusher, device_facts
from .jobio import cgroup_value
from .launcher import LauncherClient, LauncherFailed
from .proxy import Channel, InvalidReturn, JobTimeout, LearnerDied, LearnerSession, OutputFlood, RemoteObject, SolutionImportError

# Two-sided: a verdict is wrong at most this rarely at each look.
CONFIDENCE = 0.998
MIN_ROUNDS = 10
MAX_ROUNDS = 400
# Rounds before the measured ones: page cache, the server's first forks.
DISCARDED_ROUNDS = 2
MAX_WARMUPS = 2
# The grace after a timed call in which CPU the learner's processes still use is charged to it.
MAX_GRACE_S = 0.02
VERDICTS = ("pass", "fail", "ambiguous", "refused")
# What a call's cost was read from (``Sample.charged``): the container's CPU
# time (cgroup), the wall time alone (no cgroup figure), or the GPU (cuda).
CLOCKS = ("cgroup", "wall", "cuda")


class OursFailed(RuntimeError):
    """The rung's side failed (its input generator, or its baseline raised or died):
    never the learner's fault, so it propagates and the job is an infra_error."""


class Refused(Exception):
    """The measurement cannot stand: ``reason`` says why (a fact the host words)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def ratio_interval(log_ratios: list[float], confidence: float = CONFIDENCE) -> tuple[float, float, float] | None:
    """Median of ``log_ratios`` and its distribution-free interval; None while too few.

    The interval is (x_(k), x_(n+1-k)) of the sorted values, with the largest
    k whose binomial tail P(B(n, 1/2) < k) is at most (1 - confidence) / 2.
    """
    n = len(log_ratios)
    alpha = (1 - confidence) / 2
    tail, k = 0.0, 0
    while k < n:
        step = math.comb(n, k) / 2**n
        if tail + step > alpha:
            break
        tail += step
        k += 1
    if k == 0:
        return None
    ordered = sorted(log_ratios)
    middle = n // 2
    median = ordered[middle] if n % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return median, ordered[k - 1], ordered[n - k]


def decide(log_ratios: list[float], min_ratio: float) -> str | None:
    """pass or fail once the interval is clear of ``min_ratio``; None while it straddles it."""
    if len(log_ratios) < MIN_ROUNDS:
        return None
    found = ratio_interval(log_ratios)
    if found is None:
        return None
    _, low, high = found
    target = math.log(min_ratio)
    if low >= target:
        return "pass"
    if high < target:
        return "fail"
    return None


def _cpu_usage_s() -> float | None:
    """CPU seconds the whole container has used (cgroup v2, else v1)."""
    usec = cgroup_value("/sys/fs/cgroup/cpu.stat", key="usage_usec")
    if usec is not None:
        return usec / 1e6
    nsec = cgroup_value("/sys/fs/cgroup/cpuacct/cpuacct.usage", "/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage")
    return nsec / 1e9 if nsec is not None else None


def cpu_quota() -> float:
    """How many CPUs the container may use (its cgroup's quota; else the CPUs it may run on)."""
    try:
        quota, period = open("/sys/fs/cgroup/cpu.max").read().split()[:2]
        if quota != "max":
            return max(0.01, int(quota) / int(period))
    except (OSError, ValueError):
        pass
    return float(len(os.sched_getaffinity(0)) or 1)


def pick_clock(gpu: dict[str, str] | None, cpu_usage_s: float | None) -> str:
    """The phase's clock, one for both sides of every round: cuda where a GPU is seen,
    else the cgroup's CPU time where it can be read, else the wall time."""
    if gpu is not None:
        return "cuda"
    return "cgroup" if cpu_usage_s is not None else "wall"


@dataclass
class Sample:
    wall_s: float
    cpu_s: float | None
    # The CUDA events' span, as the learner's process said it (``gpu_timing.call_on_device``).
    gpu_s: float | None = None

    def charged_on(self, clock: str, quota: float) -> float:
        """What the call costs on the phase's ``clock``. On ``cuda``, the
        larger of its wall time read here, the events' span and its CPU time
        spread over the job's CPUs: the GPU's work shows in no CPU figure,
        and the events' span comes from the learner's process, so it may
        only add. On ``wall``, its wall time. Else ``charged``."""
        if clock == "cuda":
            return max(self.wall_s, self.gpu_s or 0.0, (self.cpu_s or 0.0) / quota)
        if clock == "wall":
            return self.wall_s
        return self.charged(quota)

    def charged(self, quota: float) -> float:
        """What the call costs: its CPU time, or its wall time when that is shorter
        (work spread over several CPUs), never less than the CPU time spread
        over every CPU the job may use. CPU time is the container's, read
        from outside: time spent waiting for a CPU the host's other work
        holds is not the code's (a loaded machine slows both sides' wall
        time, unevenly), and no process or thread of the learner's escapes it.
        Without the cgroup's figure, the wall time."""
        if self.cpu_s is None:
            return self.wall_s
        return max(self.cpu_s / quota, min(self.wall_s, self.cpu_s))


def timed_call(session: LearnerSession, entry: str, args: list[Any], flusher: L2Flusher | None = None) -> tuple[Any, Sample]:
    """Call ``entry`` once, timed from here: wall time, and the container's CPU in the call and a grace after it.
    With ``flusher`` (a GPU is seen): the L2 flushed first, the call made on the device (``gpu_timing``)."""
    gpu_s: float | None = None
    if flusher is not None:
        flusher.flush()
    cpu_before = _cpu_usage_s()
    own_before = time.process_time()
    started = time.perf_counter()
    if flusher is not None:
        value, gpu_s = session.call_on_device(entry, tuple(args))
    else:
        value = session.call(None, entry, tuple(args), {})
    wall = time.perf_counter() - started
    cpu_s: float | None = None
    if cpu_before is not None:
        # Work the call left running goes on in the grace and is charged; the
        # learner's process is told nothing (it waits for its next message).
        time.sleep(min(MAX_GRACE_S, max(0.001, wall)))
        cpu_after = _cpu_usage_s()
        if cpu_after is not None:
            cpu_s = max(0.0, (cpu_after - cpu_before) - (time.process_time() - own_before))
    return value, Sample(wall, cpu_s, gpu_s)


def _default_check(got: Any, expected: Any) -> None:
    from grading import assert_close, assert_equal

    if _has_floats(expected):
        assert_close(got, expected, what="the result")
    else:
        assert_equal(got, expected, what="the result")


def _has_floats(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_floats(item) for item in value)
    if isinstance(value, dict):
        return any(_has_floats(item) for item in value.values())
    dtype = getattr(value, "dtype", None)
    return dtype is not None and ("float" in str(dtype) or "complex" in str(dtype))


@dataclass
class SpeedPlan:
    """What the payload's ``speed`` asks for (the host built it from rung.yaml)."""

    entry: str
    generator: types.ModuleType
    sizes: list[dict[str, Any]]
    baseline: str
    min_ratio: float
    budget_s: float
    seed: int

    @classmethod
    def from_payload(cls, data: dict[str, Any], seed: int) -> SpeedPlan:
        module = types.ModuleType("speed_inputs")
        exec(compile(str(data["generator"]), "speed_inputs.py", "exec"), module.__dict__)  # the rung's own, trusted code
        sizes = [dict(size) for size in data.get("sizes") or [{}]]
        return cls(
            entry=str(data["entry"]), generator=module, sizes=sizes, baseline=str(data["baseline"]),
            min_ratio=float(data["min_ratio"]), budget_s=float(data["budget_s"]), seed=seed,
        )  # fmt: skip

    def inputs(self, round_number: int, calls: int) -> list[list[Any]]:
        """Fresh inputs for one round's calls, from the Submit's seed (a rejudge draws the same)."""
        import numpy

        rng = numpy.random.default_rng([self.seed & (2**63 - 1), round_number])
        size = self.sizes[round_number % len(self.sizes)]
        return [list(self.generator.make_inputs(rng, **size)) for _ in range(calls)]

    def check(self, got: Any, expected: Any) -> None:
        if isinstance(got, RemoteObject):
            raise InvalidReturn("not plain data")
        custom = getattr(self.generator, "check", None)
        (custom or _default_check)(got, expected)


@dataclass
class SpeedResult:
    verdict: str
    reason: str = ""
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    rounds: int = 0
    learner_s: float | None = None
    baseline_s: float | None = None
    cpu_checked: bool = False
    phase_s: float = 0.0
    clock: str = ""
    # The GPU timed on (``clock`` cuda): its name and driver.
    device: str = ""
    driver: str = ""
    log_ratios: list[float] = field(default_factory=list)

    def facts(self, min_ratio: float) -> dict[str, Any]:
        found = ratio_interval(self.log_ratios) if self.log_ratios else None
        if found is not None:
            median, low, high = found
            self.ratio, self.ci_low, self.ci_high = (round(math.exp(x), 4) for x in (median, low, high))
        return {
            "verdict": self.verdict, "reason": self.reason, "target": min_ratio, "ratio": self.ratio,
            "ci_low": self.ci_low, "ci_high": self.ci_high, "confidence": CONFIDENCE, "rounds": self.rounds,
            "learner_s": self.learner_s, "baseline_s": self.baseline_s, "cpu_checked": self.cpu_checked,
            "phase_s": round(self.phase_s, 3), "clock": self.clock, "device": self.device, "driver": self.driver,
        }  # fmt: skip


def _one_process(
    open_session: Callable[[str], Any], source: str, entry: str, inputs: list[list[Any]], flusher: L2Flusher | None
) -> tuple[list[Any], Sample]:
    """Load ``source`` in a fresh process, call ``entry`` on each input (the last one timed), end it."""
    session = open_session(source)
    try:
        outputs = [session.call(None, entry, tuple(args), {}) for args in inputs[:-1]]
        value, sample = timed_call(session, entry, inputs[-1], flusher)
        outputs.append(value)
    finally:
        session.end()
    return outputs, sample


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def measure(
    plan: SpeedPlan, channel: Channel | None, source: str, gpu: dict[str, str] | None = None, open_session: Callable[[str], Any] | None = None
) -> SpeedResult:
    """Rounds until the verdict is clear or the budget ends (see the module's text).
    ``gpu``: the device this container sees (``gpu_timing.device_facts``), timed on when given.
    ``open_session``: a fresh process holding a source, a ``LearnerSession`` of ``channel`` unless
    given (scripts/gpu_check_speed.py gives processes of its own: no Docker, no fork server there)."""
    if open_session is None:
        assert channel is not None, "a channel or a way to open sessions"
        open_session = lambda code: LearnerSession(channel, code)  # noqa: E731
    started = time.monotonic()
    deadline = started + plan.budget_s
    quota = cpu_quota()
    clock = pick_clock(gpu, _cpu_usage_s())
    try:
        flusher = L2Flusher() if clock == "cuda" else None
    except Exception as exc:  # the GPU failed us before any learner's code ran
        raise OursFailed(f"the L2 flush buffer failed: {type(exc).__name__}: {exc}") from exc
    draw = random.SystemRandom()
    log_ratios: list[float] = []
    learner_times: list[float] = []
    baseline_times: list[float] = []
    cpu_checked = True
    verdict: str | None = None
    round_number = 0
    last_round_s = 0.0
    while verdict is None and round_number < MAX_ROUNDS + DISCARDED_ROUNDS:
        # A round that would end past the budget is not started.
        if time.monotonic() + last_round_s > deadline:
            break
        round_started = time.monotonic()
        try:
            inputs = plan.inputs(round_number, 1 + draw.randint(1, MAX_WARMUPS))
        except Exception as exc:
            raise OursFailed(f"speed_inputs.make_inputs failed: {type(exc).__name__}: {exc}") from exc
        sides = [("learner", source), ("baseline", plan.baseline)]
        if draw.random() < 0.5:
            sides.reverse()
        results: dict[str, tuple[list[Any], Sample]] = {}
        for name, code in sides:
            if name == "learner":
                results[name] = _one_process(open_session, code, plan.entry, inputs, flusher)
                continue
            try:
                results[name] = _one_process(open_session, code, plan.entry, inputs, flusher)
            except JobTimeout:
                raise
            except Exception as exc:
                raise OursFailed(f"the baseline failed: {type(exc).__name__}: {exc}") from exc
        learner_out, learner_sample = results["learner"]
        baseline_out, baseline_sample = results["baseline"]
        for got, expected in zip(learner_out, baseline_out, strict=True):
            try:
                plan.check(got, expected)
            except (AssertionError, InvalidReturn) as exc:
                raise Refused("wrong_output") from exc
        last_round_s = time.monotonic() - round_started
        round_number += 1
        if round_number <= DISCARDED_ROUNDS:
            continue
        cpu_checked = cpu_checked and learner_sample.cpu_s is not None and baseline_sample.cpu_s is not None
        learner_s, baseline_s = learner_sample.charged_on(clock, quota), baseline_sample.charged_on(clock, quota)
        learner_times.append(learner_s)
        baseline_times.append(baseline_s)
        log_ratios.append(math.log(max(baseline_s, 1e-9) / max(learner_s, 1e-9)))
        verdict = decide(log_ratios, plan.min_ratio)
    result = SpeedResult(
        verdict or "ambiguous", reason="" if verdict else "budget", rounds=len(log_ratios), cpu_checked=cpu_checked and bool(log_ratios),
        clock=clock, device=(gpu or {}).get("device", ""), driver=(gpu or {}).get("driver", ""),
    )  # fmt: skip
    result.log_ratios = log_ratios
    if learner_times:
        result.learner_s, result.baseline_s = round(_median(learner_times), 6), round(_median(baseline_times), 6)
    result.phase_s = time.monotonic() - started
    return result


def run_speed_phase(payload: dict[str, Any], launcher: LauncherClient, source: str, lean: bool) -> dict[str, Any]:
    """The speed phase of a passed Submit: its facts for the report (``speed``)."""
    started = time.monotonic()
    data = dict(payload["speed"])
    plan = SpeedPlan.from_payload(data, int(payload.get("seed") or 0))
    # The channel's own deadline stops a call that hangs: the budget, and as much again.
    try:
        control = launcher.reset(lean=lean, wait_s=plan.budget_s)
    except LauncherFailed:
        return SpeedResult("refused", reason="processes").facts(plan.min_ratio)
    channel = Channel(control, deadline=started + 2 * plan.budget_s)
    gpu = device_facts()
    try:
        result = measure(plan, channel, source, gpu)
    except OursFailed:
        raise  # the rung's fault, not the learner's: the job is an infra_error
    except Refused as exc:
        result = SpeedResult("refused", reason=exc.reason)
    except JobTimeout:
        result = SpeedResult("ambiguous", reason="budget")
    except (LearnerDied, SolutionImportError, InvalidReturn, OutputFlood):
        result = SpeedResult("refused", reason="learner_died")
    except Exception:  # noqa: BLE001 - what the learner's code raised in a call: no measurement
        result = SpeedResult("refused", reason="raised")
    finally:
        control.close()
    result.phase_s = time.monotonic() - started
    return result.facts(plan.min_ratio)
