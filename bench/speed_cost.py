"""What the speed phase adds to a Submit (issue 60): the same Submit with and without it, in one run.

``make bench`` calls ``measure_speed_cost``; ``python -m bench.speed_cost``
runs it alone (it prints the figures and writes nothing). The speed rung's
reference (inference-and-serving, batched-kv-gather) is submitted straight
through the sandbox runner, no web, queue or database: alternately with its
speed section and without it (the correctness-only Submit), the same seed
for both of a pair. It reports the p50 of each, the seconds the speed phase
adds per Submit, the phase's own duration as the harness measured it
(``SpeedFacts.phase_s``) and the ratio with / without.
"""

from __future__ import annotations

import os
import statistics
import sys
from typing import Any

from bench.rungs import REPO_ROOT, RUNGS_DIR

SPEED_RUNG = RUNGS_DIR / "08-batched-kv-gather"


def _speed_rung() -> Any:
    from exercises.loader import read_rung

    return read_rung(SPEED_RUNG)


def _submit(runner: Any, rung: Any, seed: int, with_speed: bool) -> tuple[float, Any]:
    """One Submit of the rung's reference: its total seconds, and its speed facts (None without a speed phase)."""
    from sandbox.jobs import Job, Limits

    job = Job(
        mode="submit", source=rung.reference, tests={"test_hidden.py": rung.hidden_tests}, limits=Limits.from_dict(rung.meta.limits.model_dump()),
        seed=seed, reference=rung.reference, speed=rung.speed_payload if with_speed else None,
    )  # fmt: skip
    result = runner.run(job)
    if result.outcome != "passed":
        raise RuntimeError(f"the speed rung's reference did not pass Submit: {result.outcome} {result.message[:300]}")
    if with_speed and (result.speed is None or result.speed.verdict == "refused"):
        raise RuntimeError(f"the speed rung's reference had no speed measurement: {result.speed}")
    # An ambiguous phase (a loaded machine: its budget ended first) still costs what it cost: counted, and said.
    return float(result.timings["total_s"]), result.speed


def measure_speed_cost(image: str, pairs: int = 5) -> dict[str, Any]:
    """p50 seconds of a Submit of the speed rung with and without its speed phase, and what the phase adds."""
    from sandbox.runner import SandboxRunner

    _setup_django()
    rung = _speed_rung()
    runner = SandboxRunner(image, startup_s=120)
    with_speed: list[float] = []
    without: list[float] = []
    phases: list[float] = []
    verdicts: dict[str, int] = {}
    try:
        _submit(runner, rung, 0, with_speed=False)  # the first job after start-up pays for it
        for pair in range(pairs):
            seed = 1000 + pair
            # Which goes first alternates: the machine's drift falls on both.
            for speed in (pair % 2 == 0, pair % 2 == 1):
                total_s, facts = _submit(runner, rung, seed, with_speed=speed)
                (with_speed if speed else without).append(total_s)
                if facts is not None:
                    phases.append(facts.phase_s)
                    verdicts[facts.verdict] = verdicts.get(facts.verdict, 0) + 1
    finally:
        runner.close()
    with_p50, without_p50 = statistics.median(with_speed), statistics.median(without)
    return {
        "speed_rung": rung.meta.slug,
        "speed_submit_p50_s": round(with_p50, 3),
        "speed_submit_without_phase_p50_s": round(without_p50, 3),
        "speed_phase_added_s": round(with_p50 - without_p50, 3),
        "speed_phase_p50_s": round(statistics.median(phases), 3),
        "speed_submit_vs_correctness_only": round(with_p50 / without_p50, 2),
        "speed_phase_verdicts": verdicts,
    }


def _setup_django() -> None:
    """The catalog's loader needs Django's settings; ``make bench``'s own process drives the stack
    from outside and never set it up (its speed-cost step crashed there for want of it)."""
    from django.apps import apps

    if apps.ready:
        return
    for path in (str(REPO_ROOT), str(REPO_ROOT / "platform")):
        if path not in sys.path:
            sys.path.insert(0, path)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECRET_KEY", "bench-speed-cost")
    import django

    django.setup()


def main() -> int:
    _setup_django()
    from sandbox.build import ensure_image

    pairs = int(os.environ.get("BENCH_SPEED_PAIRS") or 5)
    for key, value in measure_speed_cost(ensure_image(), pairs).items():
        print(f"  {key.ljust(36)} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
