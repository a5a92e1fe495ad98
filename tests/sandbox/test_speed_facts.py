"""The speed phase's statistics and its facts as the host reads them, without Docker (issue 60).

The interval is the distribution-free one of the median (order statistics of
the binomial); a verdict is believed only as far as its numbers bear it out.
"""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sandbox" / "harness"))

from dojo_harness.speed import MIN_ROUNDS, Sample, decide, ratio_interval  # type: ignore[import-not-found]

from sandbox.report import parse_report, parse_speed


def test_the_interval_holds_the_median_and_needs_enough_rounds() -> None:
    assert ratio_interval([0.1] * 9) is None  # 2 / 2**9 > 0.002: nine rounds cannot decide at 99.8 %
    values = [math.log(1.5) + random.Random(seed).gauss(0, 0.1) for seed in range(40)]
    median, low, high = ratio_interval(values)
    assert low <= median <= high
    assert low < math.log(1.5) < high


def test_decide_passes_fails_or_waits() -> None:
    rng = random.Random(3)
    fast = [math.log(1.5) + rng.gauss(0, 0.05) for _ in range(30)]
    assert decide(fast, 1.0) == "pass"
    assert decide(fast, 2.0) == "fail"
    assert decide(fast, 1.5) is None
    assert decide(fast[: MIN_ROUNDS - 1], 1.0) is None


def test_a_call_costs_its_cpu_time_but_never_less_than_spread_over_the_quota() -> None:
    # Waiting for a CPU the host's other work holds is not the code's.
    assert Sample(wall_s=0.090, cpu_s=0.010).charged(1.0) == pytest.approx(0.010)
    # Work on two CPUs: its wall time, never below CPU time over both.
    assert Sample(wall_s=0.006, cpu_s=0.010).charged(2.0) == pytest.approx(0.006)
    assert Sample(wall_s=0.001, cpu_s=0.010).charged(2.0) == pytest.approx(0.005)
    assert Sample(wall_s=0.004, cpu_s=None).charged(1.0) == pytest.approx(0.004)


GOOD: dict[str, Any] = {
    "verdict": "pass", "reason": "", "target": 1.0, "ratio": 1.5, "ci_low": 1.2, "ci_high": 1.9, "confidence": 0.998,
    "rounds": 14, "learner_s": 0.01, "baseline_s": 0.015, "cpu_checked": True, "phase_s": 2.0,
    "clock": "cgroup", "device": "", "driver": "",
}  # fmt: skip


def test_a_sound_report_is_kept() -> None:
    facts = parse_speed(GOOD)
    assert facts is not None and facts.as_dict() == GOOD


@pytest.mark.parametrize(
    ("change", "verdict"),
    [
        ({"ci_low": 0.9}, "ambiguous"),  # a pass whose interval reaches below the target
        ({"verdict": "fail"}, "ambiguous"),  # a fail whose interval is above it
        ({"ratio": float("nan")}, "ambiguous"),
        ({"ratio": 5.0}, "ambiguous"),  # outside its own interval
        ({"ci_low": True}, "ambiguous"),
        ({"target": -1}, "pass"),  # an unknown target reads as 1.0
    ],
)
def test_a_verdict_its_numbers_do_not_bear_out_is_no_verdict(change: dict[str, Any], verdict: str) -> None:
    facts = parse_speed({**GOOD, **change})
    assert facts is not None and facts.verdict == verdict


@pytest.mark.parametrize("data", [None, "pass", [], {"verdict": "won"}, {"verdict": ["pass"]}])
def test_junk_is_no_speed_result(data: Any) -> None:
    assert parse_speed(data) is None


def test_junk_fields_are_dropped() -> None:
    facts = parse_speed({**GOOD, "reason": "x" * 500, "rounds": 10**9, "learner_s": "fast", "cpu_checked": 1, "phase_s": 1e12})
    assert facts is not None
    assert (facts.reason, facts.rounds, facts.learner_s, facts.cpu_checked, facts.phase_s) == ("", 0, None, False, 0.0)


def test_speed_comes_only_with_a_passed_submit() -> None:
    assert parse_report({"outcome": "passed", "tests": [], "speed": GOOD}).speed is not None
    assert parse_report({"outcome": "failed", "tests": [], "speed": GOOD}).speed is None
