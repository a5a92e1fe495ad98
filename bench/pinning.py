"""What pinning a worker slot's containers to one core (SANDBOX_PIN_CPUS) changes, in one run.

Usage (from the repository root)::

    .venv/bin/python -m bench.pinning

Two worker slots, each a runner with one warm container that it reuses as a
worker does, grade the burst's jobs (five rungs, Run and Submit mixed, the
references) side by side, as fast as they can: once with slot i pinned to
core i, once with the kernel placing every process. The two take turns
(``BENCH_PIN_ROUNDS`` rounds of each, 3 by default), so a machine that gets
slower or faster during the run moves both alike. Then one slot alone grades
the KV rung's Submit five times each way (the learner's wait at low load).

Printed: jobs per minute, container CPU seconds per job (the Docker cgroup's
counter) and a Submit's p50 on each side, with pinned / unpinned ratios;
written to bench/pinning-results.json. No web, queue or database: only the
sandbox, where the difference is.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bench.bench import BURST_RUNGS, _rung_dir, burst_kind

REPO_ROOT = Path(__file__).resolve().parents[1]
SLOTS = 2


def _job(slug: str, mode: str) -> Any:
    from sandbox.jobs import Job

    folder = _rung_dir(slug)
    reference = (folder / "reference.py").read_text()
    test = "test_hidden.py" if mode == "submit" else "test_visible.py"
    return Job(mode=mode, source=reference, tests={test: (folder / test).read_text()}, reference=reference if mode == "submit" else "")  # type: ignore[arg-type]


def _jobs(slot: int) -> list[Any]:
    """A slot's ten jobs: the burst's rungs twice, Runs and Submits as the burst mixes them."""
    return [_job(slug, burst_kind(slot, index)) for index, slug in enumerate(BURST_RUNGS)] * 2


def _runner(image: str, first_core: int | None) -> Any:
    from sandbox.runner import SandboxRunner

    return SandboxRunner(image, pool_size=1, reuse_jobs=25, first_core=first_core, startup_s=120)


def _grade(runner: Any, job: Any) -> float:
    started = time.perf_counter()
    result = runner.run(job)
    if result.outcome != "passed":
        raise RuntimeError(f"a reference did not pass: {result.outcome} {result.message[:300]}")
    return time.perf_counter() - started


def _wait_warm(runner: Any, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while runner.pool is not None and runner.pool.ready < 1 and time.monotonic() < deadline:
        time.sleep(0.2)


def measure_slots(image: str, pinned: bool) -> dict[str, float]:
    """Both slots grade their ten jobs at once: jobs per minute and container CPU per job."""
    from bench.cpu_split import _docker_ns

    runners = [_runner(image, slot if pinned else None) for slot in range(SLOTS)]
    try:
        for runner in runners:  # the first job of a runner pays for its engine probe
            _wait_warm(runner)
            _grade(runner, _job(BURST_RUNGS[0], "run"))
        for runner in runners:
            _wait_warm(runner)
        errors: list[BaseException] = []
        jobs = [_jobs(slot) for slot in range(SLOTS)]

        def work(slot: int) -> None:
            try:
                for job in jobs[slot]:
                    _grade(runners[slot], job)
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(slot,)) for slot in range(SLOTS)]
        cpu_before = _docker_ns()[0]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        cpu = _docker_ns()[0] - cpu_before
        if errors:
            raise errors[0]
        count = sum(len(slot_jobs) for slot_jobs in jobs)
        return {"jobs": count, "seconds": elapsed, "jobs_per_min": count / elapsed * 60, "container_cpu_s_per_job": cpu / count}
    finally:
        for runner in runners:
            runner.close()


def measure_submit(image: str, pinned: bool, runs: int = 5) -> list[float]:
    runner = _runner(image, 0 if pinned else None)
    try:
        _wait_warm(runner)
        _grade(runner, _job(BURST_RUNGS[0], "run"))
        times = []
        for _ in range(runs):
            _wait_warm(runner)
            times.append(_grade(runner, _job(BURST_RUNGS[0], "submit")))
        return times
    finally:
        runner.close()


def measure_pinning(image: str, rounds: int = 3) -> dict[str, Any]:
    sides: dict[str, list[dict[str, float]]] = {"pinned": [], "unpinned": []}
    submits: dict[str, list[float]] = {"pinned": [], "unpinned": []}
    for number in range(rounds):
        # Alternate which side goes first, so neither always follows the other.
        order = ("pinned", "unpinned") if number % 2 == 0 else ("unpinned", "pinned")
        for side in order:
            sides[side].append(measure_slots(image, side == "pinned"))
            print(f"[pinning] round {number + 1} {side}: {sides[side][-1]['jobs_per_min']:.1f} jobs/min", flush=True)
    for side in ("pinned", "unpinned"):
        submits[side] = measure_submit(image, side == "pinned")
    found: dict[str, Any] = {}
    for side in ("pinned", "unpinned"):
        found[f"{side}_jobs_per_min"] = round(statistics.median(r["jobs_per_min"] for r in sides[side]), 1)
        found[f"{side}_jobs_per_min_each_round"] = [round(r["jobs_per_min"], 1) for r in sides[side]]
        found[f"{side}_container_cpu_s_per_job"] = round(statistics.median(r["container_cpu_s_per_job"] for r in sides[side]), 3)
        found[f"{side}_submit_p50_s"] = round(statistics.median(submits[side]), 3)
    found["pinned_vs_unpinned_jobs_per_min"] = round(found["pinned_jobs_per_min"] / found["unpinned_jobs_per_min"], 2)
    found["pinned_vs_unpinned_cpu_per_job"] = round(found["pinned_container_cpu_s_per_job"] / found["unpinned_container_cpu_s_per_job"], 2)
    found["pinned_vs_unpinned_submit_p50"] = round(found["pinned_submit_p50_s"] / found["unpinned_submit_p50_s"], 2)
    return found


def main() -> int:
    sys.path[:0] = [str(REPO_ROOT), str(REPO_ROOT / "platform")]
    from sandbox.build import ensure_image

    found = measure_pinning(ensure_image(), rounds=int(os.environ.get("BENCH_PIN_ROUNDS", "3")))
    for key, value in found.items():
        print(f"  {key.ljust(40)} {value}")
    (REPO_ROOT / "bench" / "pinning-results.json").write_text(json.dumps(found, indent=2) + "\n")
    print("  written to bench/pinning-results.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
