"""The speed phase (issue 60) against solutions that try to look fast.

Each Submit goes through the real runner and harness: the correctness tests
pass, then the speed phase times the solution against a baseline. A cheat
must end as ``fail`` or ``refused`` (``ambiguous`` at worst), never ``pass``.
The task is small on purpose: the sum of squares of a list of ints, whose
cost an honest solution sets by how many passes it makes over the list.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from sandbox.jobs import Job, JobResult, Limits, SpeedFacts

from .support import ATTACK_LIMITS, Sandbox, assert_nothing_of_the_job_survived

pytestmark = [pytest.mark.docker, pytest.mark.security]

TESTS = {
    "test_hidden.py": (
        "def test_small(solution):\n"
        "    assert solution.sum_squares([1, 2, -3]) == 14\n\n"
        "def test_empty(solution):\n"
        "    assert solution.sum_squares([]) == 0\n"
    )
}
GENERATOR = "def make_inputs(rng, n):\n    return [rng.integers(-1000, 1000, size=n).tolist()]\n"
N = 2_000


def passes(count: int, extra: str = "", body: str = "") -> str:
    """An honest solution making ``count`` passes over the list (its cost), with ``extra`` at module level."""
    return (
        f"{extra}\n"
        "def sum_squares(xs):\n"
        f"{body}"
        "    total = 0\n"
        f"    for _ in range({count}):\n"
        "        total = 0\n"
        "        for x in xs:\n"
        "            total += x * x\n"
        "    return total\n"
    )


def speed_job(source: str, baseline: str, min_ratio: float, budget_s: float = 6.0) -> Job:
    speed = {
        "entry": "sum_squares",
        "generator": GENERATOR,
        "sizes": [{"n": N}],
        "baseline": baseline,
        "min_ratio": min_ratio,
        "budget_s": budget_s,
    }
    return Job(mode="submit", source=source, tests=TESTS, limits=Limits(**ATTACK_LIMITS), seed=11, speed=speed)


def measure(sandbox: Sandbox, job: Job) -> tuple[JobResult, SpeedFacts]:
    ids: list[str] = []
    result = sandbox.runner.run(job, on_event=lambda kind, data: ids.append(str(data["id"])) if kind == "container" else None)
    assert ids, "the runner never reported its container"
    assert_nothing_of_the_job_survived(sandbox.runner, ids[0])
    assert result.outcome == "passed", (result.outcome, result.message, result.tests)
    assert result.speed is not None, "no speed phase ran"
    return result, result.speed


SLOW = passes(150)
FAST = passes(100)


def test_an_honestly_faster_solution_passes_and_a_slower_one_fails(sandbox: Sandbox) -> None:
    _, fast = measure(sandbox, speed_job(FAST, SLOW, 1.0))
    assert fast.verdict == "pass", fast
    assert fast.ci_low is not None and fast.ci_low >= 1.0 and fast.cpu_checked
    assert (fast.clock, fast.device, fast.driver) == ("cgroup", "", ""), fast  # no GPU here: the CPU clock, as before
    _, slow = measure(sandbox, speed_job(SLOW, FAST, 1.0))
    assert slow.verdict == "fail", slow


CHEATS = {
    # The warm-up's answer served again on the timed call.
    "cache_across_calls": passes(150, "_last = []", "    if _last:\n        return _last[0]\n    _last.append(0)\n"),
    # Slow on the first call of a process (a warm-up, it guesses), a fast wrong answer after.
    "tells_warmup_from_timed": passes(150, "_calls = [0]", "    _calls[0] += 1\n    if _calls[0] > 1:\n        return 0\n"),
    # A fast path for large inputs that samples the list instead of reading it.
    "special_cases_the_shape": passes(150, "", "    if len(xs) > 1000:\n        return sum(x * x for x in xs[:100]) * (len(xs) // 100)\n"),
    # The clocks in its own process stopped: the harness's are elsewhere.
    "patches_perf_counter": passes(
        150, "import time\ntime.perf_counter = lambda: 0.0\ntime.monotonic = lambda: 0.0\ntime.perf_counter_ns = lambda: 0"
    ),
    # Work left running after each call (a thread), and a process that outlives its
    # own, burning CPU to slow the baseline's turn.
    "background_thread_and_process": passes(
        150,
        "import os, threading\ndef _burn():\n    while True:\n        pass\nif os.fork() == 0:\n    os.setsid()\n    _burn()\n",
        "    threading.Thread(target=_burn, daemon=True).start()\n",
    ),
}


@pytest.mark.parametrize("name", list(CHEATS))
def test_a_cheat_never_passes(sandbox: Sandbox, name: str) -> None:
    # Honest, each of these is as slow as the baseline: a 1.3x target is out of its reach.
    _, facts = measure(sandbox, speed_job(CHEATS[name], SLOW, 1.3))
    assert facts.verdict in ("fail", "refused", "ambiguous"), facts
    if name in ("cache_across_calls", "tells_warmup_from_timed", "special_cases_the_shape"):
        assert (facts.verdict, facts.reason) == ("refused", "wrong_output"), facts


@pytest.fixture
def background_load() -> Iterator[None]:
    """One busy process on the host for the whole test."""
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        burner.kill()
        burner.wait()


# Fewer than the 20 per pair: the suite's time budget. SPEED_STABILITY_REPEATS=20 runs the count.
REPEATS = int(os.environ.get("SPEED_STABILITY_REPEATS") or 4)


def test_verdicts_are_stable_under_load(sandbox: Sandbox, background_load: None) -> None:
    verdicts: dict[str, list[Any]] = {"1.5x": [], "10%": []}
    for _ in range(REPEATS):
        verdicts["1.5x"].append(measure(sandbox, speed_job(passes(100), passes(150), 1.0))[1])
        verdicts["10%"].append(measure(sandbox, speed_job(passes(100), passes(110), 1.0))[1])
    print(
        {
            pair: [(facts.verdict, facts.ratio, facts.ci_low, facts.ci_high, facts.rounds, facts.phase_s) for facts in found]
            for pair, found in verdicts.items()
        }
    )
    wide = {facts.verdict for facts in verdicts["1.5x"]}
    assert wide == {"pass"}, verdicts["1.5x"]
    close = {facts.verdict for facts in verdicts["10%"]}
    assert not {"pass", "fail"} <= close and "refused" not in close, verdicts["10%"]
    for facts in verdicts["1.5x"] + verdicts["10%"]:
        assert facts.phase_s <= 2 * 6.0 + 1, facts


def test_a_broken_generator_or_baseline_is_ours_never_the_learners(sandbox: Sandbox) -> None:
    broken = {
        "generator": "def make_inputs(rng, n):\n    raise KeyError(n)\n",
        "baseline": "def sum_squares(xs):\n    raise RuntimeError('the baseline broke')\n",
    }
    for key, source in broken.items():
        job = speed_job(FAST, SLOW, 1.0)
        assert job.speed is not None
        job.speed[key] = source
        result = sandbox.runner.run(job)
        assert (result.outcome, result.error_code) == ("infra_error", "harness_crashed"), (key, result.outcome, result.message)
