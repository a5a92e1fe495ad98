"""What pacing the waiting pages' polls (``poll_after_ms``) changes under a burst, in one run.

Usage (from the repository root)::

    .venv/bin/python -m bench.experiments.pacing

Starts the bench's stack once (gunicorn, Redis, a Celery worker, SQLite),
then sends `make bench`'s burst (100 jobs from 20 learners, Run and Submit
mixed) again and again, its pages polling either as they do now (when the
state says, ``bench.polling``) or as they did before (every 0.7 s, whatever
the queue), taking turns (``BENCH_PACING_ROUNDS`` rounds of each, 2 by
default). Printed per side: jobs per minute, state polls per job, p95 queue
wait and the web's share of the busy CPU, with paced / fixed ratios;
written to bench/experiments/pacing-results.json.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULTS_PATH = REPO_ROOT / "bench" / "experiments" / "pacing-results.json"
# The page before the state said when: every 0.7 s while a job was not done.
FIXED_POLL_S = 0.7


def main() -> int:
    sys.path[:0] = [str(REPO_ROOT), str(REPO_ROOT / "platform")]
    from bench import stack as stack_mod
    from bench.bench import Learner, burst_env, measure_burst
    from bench.cpu_split import CpuSampler
    from bench.polling import next_poll_s
    from bench.stack import USER_PREFIX, Stack, StackConfig

    rounds = int(os.environ.get("BENCH_PACING_ROUNDS", "2"))
    config = StackConfig(
        work_dir=REPO_ROOT / "var" / "bench-pacing", users=21, web_port=8210, redis_port=6397, web_workers=2, web_threads=16, worker_concurrency=2,
    )  # fmt: skip
    env = burst_env(config)
    stack_mod.prepare(config, env)
    sides: dict[str, Callable[[dict[str, Any]], float]] = {"paced": next_poll_s, "fixed 0.7 s": lambda _state: FIXED_POLL_S}
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
    stack = Stack(env, config)
    try:
        stack_mod.start(stack, config)
        learners = [Learner(config.host, f"{USER_PREFIX}{n:04d}") for n in range(2, config.users + 1)]  # 20, as the bench's burst
        print("[pacing] warm-up burst (not counted)", flush=True)
        measure_burst(config.host, learners)
        for index in range(rounds):
            for name, pace in sides.items() if index % 2 == 0 else reversed(sides.items()):
                time.sleep(5)
                sampler = CpuSampler(interval_s=2.0).start()
                began = time.time()
                burst = measure_burst(config.host, learners, pace=pace)
                sampler.stop()
                split = sampler.split(began - 2.5, time.time() + 1) or {}
                row = {
                    "per_min": burst["burst_per_min"], "graded": burst["burst_graded"], "total": burst["burst_total"],
                    "refused": burst["burst_refused"], "polls_per_job": round(burst["burst_state_polls"] / burst["burst_total"], 1),
                    "p95_wait_s": burst["burst_p95_wait_s"], "web_share": round(split.get("web (gunicorn)", 0.0), 3),
                    "sandbox_share": round(split.get("sandbox containers", 0.0), 3),
                }  # fmt: skip
                found[name].append(row)
                print(f"[pacing] {name}: {row}", flush=True)
    finally:
        stack.stop()
    summary = {
        name: {
            "per_min": round(statistics.median(row["per_min"] for row in rows), 1),
            "polls_per_job": round(statistics.median(row["polls_per_job"] for row in rows), 1),
            "p95_wait_s": round(statistics.median(row["p95_wait_s"] or 0 for row in rows), 2),
            "web_share": round(statistics.median(row["web_share"] for row in rows), 3),
            "all_graded": all(row["graded"] == row["total"] and row["refused"] == 0 for row in rows),
        }
        for name, rows in found.items()
    }
    paced, fixed = summary["paced"], summary["fixed 0.7 s"]
    ratios = {
        "per_min": round(paced["per_min"] / fixed["per_min"], 3),
        "polls_per_job": round(paced["polls_per_job"] / fixed["polls_per_job"], 3),
        "web_share": round(paced["web_share"] / fixed["web_share"], 3) if fixed["web_share"] else None,
    }
    RESULTS_PATH.write_text(json.dumps({"rounds": rounds, "rounds_by_side": found, "median_by_side": summary, "paced_vs_fixed": ratios}, indent=2) + "\n")
    print()
    for name, row in summary.items():
        print(f"  {name:12s} {row['per_min']:6.1f} jobs/min, {row['polls_per_job']:5.1f} polls/job, p95 wait {row['p95_wait_s']} s, "
              f"web {row['web_share']:.0%} of busy CPU, all graded: {row['all_graded']}")  # fmt: skip
    print(f"  paced / fixed: jobs/min x{ratios['per_min']}, polls/job x{ratios['polls_per_job']}, web share x{ratios['web_share']}")
    print(f"\n  written to {RESULTS_PATH.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
