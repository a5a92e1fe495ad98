"""Where a job's sandbox time goes, rung by rung: the first run, the re-run, the kernel.

Usage (from the repository root)::

    .venv/bin/python -m bench.experiments.submit_split

Issue 15 asks for a burst within 0.4 of the warm in-process floor. This says
what stands between them, job by job, with no web, queue or database: one
pinned runner with one warm container grades each of the burst's rungs as
a Run and as a Submit (the references), ``BENCH_SPLIT_RUNS`` times each (5)
back to back, and records for each job:

- its phases, from the harness's own events: set-up (the job reaches the
  harness), the first run (every test against one learner process), and
  for a Submit the re-run (each test again for a fresh learner process,
  replayed or for real) with the report;
- the container CPU seconds of the whole series, divided by its jobs
  (its set-up, its recycling and the next job's preparation included:
  what a job costs the machine), split into user and kernel time from the
  Docker cgroup;
- how many tests the re-run replayed to a fresh process.

Then, in a spawned process with one thread, as ``make bench``'s floor does,
the same jobs in warm in-process pytest: CPU seconds per job.

Printed and written to bench/experiments/submit-split-results.json: per rung and kind
the medians, the sandbox over the floor, and for a Submit the re-run's
share of it and its seconds per fresh process; and over all rungs the
kernel's share of the container CPU, and the container CPU of the burst's
job mix over the floor's (the most ``burst_vs_floor`` could read if the
web, queue and database cost nothing).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULTS_PATH = REPO_ROOT / "bench" / "experiments" / "submit-split-results.json"
KINDS = ("run", "submit")


def phases_of(marks: dict[str, float], started: float, ended: float) -> dict[str, float]:
    """A job's phases in seconds from the times its events arrived ("running", and "rerun" for a Submit)."""
    running = marks.get("running", started)
    rerun = marks.get("rerun")
    phases = {"total_s": ended - started, "setup_s": running - started}
    if rerun is None:
        phases["first_run_s"] = ended - running
    else:
        phases["first_run_s"] = rerun - running
        phases["rerun_s"] = ended - rerun
    return {key: round(value, 4) for key, value in phases.items()}


def measure_sandbox(image: str, runs: int) -> dict[str, dict[str, Any]]:
    """Each burst rung as a Run and a Submit, ``runs`` times back to back on one pinned warm runner."""
    from bench.ab import grade, job, runner, wait_warm
    from bench.cpu_split import docker_user_sys_s
    from bench.rungs import BURST_RUNGS

    slot_runner = runner(image, {"first_core": 0})
    found: dict[str, dict[str, Any]] = {}
    try:
        wait_warm(slot_runner)
        grade(slot_runner, job(BURST_RUNGS[0], "run"))  # the runner's engine probe
        for slug in BURST_RUNGS:
            for kind in KINDS:
                wait_warm(slot_runner)
                jobs: list[dict[str, Any]] = []
                user_before, kernel_before = docker_user_sys_s()
                for _ in range(runs):
                    marks: dict[str, float] = {}

                    def on_event(event: str, _data: dict[str, Any], marks: dict[str, float] = marks) -> None:
                        if event in ("running", "rerun"):
                            marks.setdefault(event, time.monotonic())

                    started = time.monotonic()
                    result = slot_runner.run(job(slug, kind), on_event=on_event)
                    ended = time.monotonic()
                    if result.outcome != "passed":
                        raise RuntimeError(f"{slug} {kind}: the reference did not pass: {result.outcome} {result.message[:300]}")
                    jobs.append({**phases_of(marks, started, ended), "tests": len(result.tests), "replayed": result.rerun_replayed})
                user_after, kernel_after = docker_user_sys_s()
                found[f"{slug}/{kind}"] = {
                    "jobs": jobs,
                    "user_s_per_job": round((user_after - user_before) / runs, 4),
                    "kernel_s_per_job": round((kernel_after - kernel_before) / runs, 4),
                }
                print(f"[split] {slug} {kind}: {statistics.median(j['total_s'] for j in jobs):.3f} s", flush=True)
    finally:
        slot_runner.close()
    return found


def _floor_cpu(runs: int, queue: Any) -> None:
    """In a spawned process with one thread: CPU seconds of each rung's Run and Submit in warm pytest."""
    os.environ["OMP_NUM_THREADS"] = "1"
    sys.stdout = open(os.devnull, "w")  # pytest's progress lines: not this bench's output
    import torch

    torch.set_num_threads(1)
    from bench.bench import _floor_job, _freeze_warm_heap, _harness_pytest
    from bench.rungs import BURST_RUNGS

    found: dict[str, list[float]] = {}
    with _harness_pytest():
        for slug in BURST_RUNGS:  # warm: each job once
            for kind in KINDS:
                _floor_job(slug, kind)
        _freeze_warm_heap()
        for slug in BURST_RUNGS:
            for kind in KINDS:
                times = []
                for _ in range(runs):
                    begin = time.process_time()
                    _floor_job(slug, kind)
                    times.append(time.process_time() - begin)
                found[f"{slug}/{kind}"] = times
    queue.put(found)


def measure_floor(runs: int) -> dict[str, list[float]]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    worker = context.Process(target=_floor_cpu, args=(runs, queue))
    worker.start()
    found: dict[str, list[float]] = queue.get(timeout=1800)
    worker.join()
    if worker.exitcode:
        raise RuntimeError("the floor process failed")
    return found


def _ratio(top: float, bottom: float) -> float | None:
    return round(top / bottom, 2) if bottom > 0 else None


def summarize(sandbox: dict[str, dict[str, Any]], floor: dict[str, list[float]]) -> dict[str, Any]:
    """Per rung and kind: phase medians, container CPU, floor CPU and their ratio; then the totals.

    The totals weigh Runs and Submits equally, as the burst mixes them.
    """
    per_job: dict[str, Any] = {}
    container_total = floor_total = kernel_total = 0.0
    for key, entry in sandbox.items():
        jobs = entry["jobs"]
        cpu = entry["user_s_per_job"] + entry["kernel_s_per_job"]
        floor_cpu = statistics.median(floor[key])
        row: dict[str, Any] = {
            name: round(statistics.median(job[name] for job in jobs), 4)
            for name in ("total_s", "setup_s", "first_run_s", "rerun_s", "tests", "replayed")
            if all(name in job for job in jobs)
        }
        row["container_cpu_s"] = round(cpu, 4)
        row["kernel_share"] = _ratio(entry["kernel_s_per_job"], cpu)
        row["floor_cpu_s"] = round(floor_cpu, 4)
        row["container_vs_floor"] = _ratio(cpu, floor_cpu)
        if "rerun_s" in row:
            row["rerun_share"] = _ratio(row["rerun_s"], row["total_s"])
            row["rerun_s_per_replayed_test"] = round(row["rerun_s"] / row["replayed"], 4) if row["replayed"] else None
        per_job[key] = row
        container_total += cpu
        floor_total += floor_cpu
        kernel_total += entry["kernel_s_per_job"]
    submits = [row for key, row in per_job.items() if key.endswith("/submit")]
    return {
        "jobs": per_job,
        "container_cpu_s_per_job": round(container_total / len(per_job), 4) if per_job else None,
        "floor_cpu_s_per_job": round(floor_total / len(per_job), 4) if per_job else None,
        "kernel_share_of_container_cpu": _ratio(kernel_total, container_total),
        # burst_vs_floor could read at most this with a free web, queue and database.
        "floor_vs_container_cpu": _ratio(floor_total, container_total),
        "submit_rerun_share_median": round(statistics.median(row["rerun_share"] for row in submits), 2) if submits else None,
        "rerun_s_per_replayed_test_median": (
            round(statistics.median(row["rerun_s_per_replayed_test"] for row in submits if row.get("rerun_s_per_replayed_test")), 4)
            if any(row.get("rerun_s_per_replayed_test") for row in submits)
            else None
        ),
    }


def main() -> int:
    sys.path[:0] = [str(REPO_ROOT), str(REPO_ROOT / "platform")]
    from sandbox.build import ensure_image

    runs = int(os.environ.get("BENCH_SPLIT_RUNS", "5"))
    image = ensure_image()
    sandbox = measure_sandbox(image, runs)
    floor = measure_floor(runs)
    found = {"image": image, "runs": runs, "cpus": os.cpu_count(), **summarize(sandbox, floor)}
    for key, row in found["jobs"].items():
        print(f"  {key.ljust(34)} " + "  ".join(f"{name} {value}" for name, value in row.items()))
    for key, value in found.items():
        if key != "jobs":
            print(f"  {key.ljust(34)} {value}")
    RESULTS_PATH.write_text(json.dumps(found, indent=2) + "\n")
    print(f"  written to bench/{RESULTS_PATH.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
