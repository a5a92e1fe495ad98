"""Two sandbox settings side by side, in one run: the grading jobs of the burst.

A side is a function from a worker slot's number to the keyword arguments of
its ``SandboxRunner``. Two slots, each a runner with one warm container that
it reuses as a worker does, grade the burst's jobs (five rungs, Run and
Submit mixed, the references) side by side, as fast as they can; the two
sides take turns for ``rounds`` rounds each (the first side goes first in
odd rounds only), so a machine that gets slower or faster during the run
moves both alike. Then one slot alone grades the bench's Submits (the KV and
GQA rungs, taking turns) a few times on each side: the learner's wait at
low load. No web, queue or database: only the sandbox.

Used by ``bench.bench`` (the sandbox alone) and ``bench.experiments.pinning`` and ``.hugepages``.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.rungs import BURST_RUNGS, RUNGS, burst_kind, rung_dir

SLOTS = 2
Side = Callable[[int], dict[str, Any]]


def job(slug: str, mode: str) -> Any:
    from sandbox.jobs import Job

    folder = rung_dir(slug)
    reference = (folder / "reference.py").read_text()
    test = "test_hidden.py" if mode == "submit" else "test_visible.py"
    return Job(mode=mode, source=reference, tests={test: (folder / test).read_text()}, reference=reference if mode == "submit" else "")  # type: ignore[arg-type]


def slot_jobs(slot: int) -> list[Any]:
    """A slot's ten jobs: the burst's rungs twice, Runs and Submits as the burst mixes them."""
    return [job(slug, burst_kind(slot, index)) for index, slug in enumerate(BURST_RUNGS)] * 2


def runner(image: str, options: dict[str, Any]) -> Any:
    from sandbox.runner import SandboxRunner

    # Two containers, as a worker's slot keeps (SANDBOX_POOL_SIZE): after a
    # Submit a container serves Submits only, so with one a Run after a
    # Submit would wait for a replacement every time (docs/security.md).
    return SandboxRunner(image, pool_size=2, reuse_jobs=100, startup_s=120, **options)


def grade(slot_runner: Any, one_job: Any) -> float:
    started = time.perf_counter()
    result = slot_runner.run(one_job)
    if result.outcome != "passed":
        raise RuntimeError(f"a reference did not pass: {result.outcome} {result.message[:300]}")
    return time.perf_counter() - started


def wait_warm(slot_runner: Any, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while slot_runner.pool is not None and slot_runner.pool.ready < 1 and time.monotonic() < deadline:
        time.sleep(0.2)


def measure_slots(image: str, side: Side, rounds: int = 1) -> dict[str, float]:
    """Both slots grade their ten jobs (``rounds`` times) at once: jobs per minute and container CPU per job."""
    from bench.cpu_split import _docker_ns

    runners = [runner(image, side(slot)) for slot in range(SLOTS)]
    try:
        for slot_runner in runners:  # the first job of a runner pays for its engine probe
            wait_warm(slot_runner)
            grade(slot_runner, job(BURST_RUNGS[0], "run"))
        for slot_runner in runners:
            wait_warm(slot_runner)
        errors: list[BaseException] = []
        jobs = [slot_jobs(slot) * rounds for slot in range(SLOTS)]

        def work(slot: int) -> None:
            try:
                for one_job in jobs[slot]:
                    grade(runners[slot], one_job)
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
        count = sum(len(each) for each in jobs)
        return {"jobs": count, "seconds": elapsed, "jobs_per_min": count / elapsed * 60, "container_cpu_s_per_job": cpu / count}
    finally:
        for slot_runner in runners:
            slot_runner.close()


def measure_submits(image: str, side: Side, runs: int = 6) -> dict[str, list[float]]:
    """Slot 0 alone: each of the bench's Submit rungs ``runs`` times, taking turns."""
    slot_runner = runner(image, side(0))
    try:
        wait_warm(slot_runner)
        grade(slot_runner, job(BURST_RUNGS[0], "run"))
        times: dict[str, list[float]] = {slug: [] for slug in RUNGS}
        for _ in range(runs):
            for slug in RUNGS:
                wait_warm(slot_runner)
                times[slug].append(grade(slot_runner, job(slug, "submit")))
        return times
    finally:
        slot_runner.close()


def compare(image: str, sides: dict[str, Side], rounds: int = 3, label: str = "ab") -> dict[str, Any]:
    """Jobs per minute, container CPU per job and Submit p50 on each of two sides, and their ratios (first / second)."""
    names = list(sides)
    if len(names) != 2:
        raise ValueError("compare takes exactly two sides")
    found_rounds: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for number in range(rounds):
        order = names if number % 2 == 0 else names[::-1]
        for name in order:
            found_rounds[name].append(measure_slots(image, sides[name]))
            print(f"[{label}] round {number + 1} {name}: {found_rounds[name][-1]['jobs_per_min']:.1f} jobs/min", flush=True)
    submits = {name: measure_submits(image, sides[name]) for name in names}
    found: dict[str, Any] = {}
    for name in names:
        found[f"{name}_jobs_per_min"] = round(statistics.median(r["jobs_per_min"] for r in found_rounds[name]), 1)
        found[f"{name}_jobs_per_min_each_round"] = [round(r["jobs_per_min"], 1) for r in found_rounds[name]]
        found[f"{name}_container_cpu_s_per_job"] = round(statistics.median(r["container_cpu_s_per_job"] for r in found_rounds[name]), 3)
        every = [t for times in submits[name].values() for t in times]
        found[f"{name}_submit_p50_s"] = round(statistics.median(every), 3)
        for slug, times in submits[name].items():
            found[f"{name}_submit_p50_s_{slug}"] = round(statistics.median(times), 3)
    first, second = names
    found[f"{first}_vs_{second}_jobs_per_min"] = round(found[f"{first}_jobs_per_min"] / found[f"{second}_jobs_per_min"], 2)
    found[f"{first}_vs_{second}_cpu_per_job"] = round(
        found[f"{first}_container_cpu_s_per_job"] / found[f"{second}_container_cpu_s_per_job"], 2
    )
    found[f"{first}_vs_{second}_submit_p50"] = round(found[f"{first}_submit_p50_s"] / found[f"{second}_submit_p50_s"], 2)
    return found


def report(found: dict[str, Any], path: Path) -> None:
    """Print the figures, one per line, and write them to ``path`` as JSON."""
    for key, value in found.items():
        print(f"  {key.ljust(48)} {value}")
    path.write_text(json.dumps(found, indent=2) + "\n")
    print(f"  written to {path.parent.name}/{path.name}")
