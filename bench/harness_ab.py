"""The sandbox harness of this checkout against an earlier one's, job by job, in one run.

Usage (from the repository root)::

    .venv/bin/python -m bench.harness_ab REV      # e.g. HEAD~1, or a commit

It builds the sandbox image of ``sandbox/harness`` as it was at ``REV``
(``git archive``; the image's tag hashes the harness, so one already built
is reused) and the image of this checkout, then grades the burst's jobs
(the five rungs' references, Runs and Submits mixed, twenty jobs) with
one pinned runner per image (two warm containers each), both on core 0, the two taking turns job by
job for ``BENCH_HARNESS_AB_ROUNDS`` rounds (5 by default: 100 jobs each;
the first side alternates by round). A shared machine's speed drifts by
tens of per cent within minutes; taking turns job by job moves both sides
alike, where rounds of twenty jobs each see the drift as noise. The Docker
cgroup's CPU counter is read around each job, and a job's ``run`` returns
only once its container has cleaned up after it (killed and deleted
everything of the job and checked it), so that counts too. Containers serve
100 jobs, as the default ``SANDBOX_REUSE_JOBS``: a replacement's start-up
is counted in the job it overlaps, on both sides alike.

Printed and written to bench/harness-ab-results.json: container CPU
seconds per Run and per Submit and the wall time of each, on each side,
with this / earlier ratios.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_PATH = REPO_ROOT / "bench" / "harness-ab-results.json"


def harness_at(rev: str, into: Path) -> Path:
    """``sandbox/harness`` as it was at ``rev``, unpacked under ``into``."""
    archive = subprocess.run(["git", "archive", rev, "sandbox/harness"], cwd=REPO_ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "sandbox" / "harness"


def side_runners(images: dict[str, str]) -> dict[str, Any]:
    """One runner per side, configured alike: two warm containers (as a worker's slot keeps: after a
    Submit a container serves Submits only, so Runs keep to the other) serving up to 100 jobs each, pinned to core 0."""
    from sandbox.runner import SandboxRunner

    return {name: SandboxRunner(image, pool_size=2, reuse_jobs=100, startup_s=120, first_core=0) for name, image in images.items()}


def interleave(images: dict[str, str], rounds: int) -> dict[str, dict[str, list[float]]]:
    """Container CPU and wall seconds of each job, per side and kind, the sides taking turns job by job."""
    from bench.ab import grade, job, slot_jobs, wait_warm
    from bench.cpu_split import _docker_ns
    from bench.rungs import BURST_RUNGS

    names = list(images)
    runners = side_runners(images)
    found: dict[str, dict[str, list[float]]] = {name: {key: [] for key in ("run_cpu", "submit_cpu", "run_wall", "submit_wall")} for name in names}
    try:
        for slot_runner in runners.values():  # the first job of a runner pays for its engine probe
            wait_warm(slot_runner)
            grade(slot_runner, job(BURST_RUNGS[0], "run"))
        jobs = slot_jobs(0) + slot_jobs(1)
        for number in range(rounds):
            for one_job in jobs:
                for name in names if number % 2 == 0 else names[::-1]:
                    wait_warm(runners[name])
                    cpu_before, started = _docker_ns()[0], time.perf_counter()
                    grade(runners[name], one_job)
                    found[name][f"{one_job.mode}_wall"].append(time.perf_counter() - started)
                    found[name][f"{one_job.mode}_cpu"].append(_docker_ns()[0] - cpu_before)
            print(f"[harness-ab] round {number + 1} of {rounds}", flush=True)
    finally:
        for slot_runner in runners.values():
            slot_runner.close()
    return found


def summarize(found: dict[str, dict[str, list[float]]], first: str, second: str) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for name in (first, second):
        for key, values in found[name].items():
            summary[f"{name}_{key}_s"] = round(sum(values) / len(values), 4)
        summary[f"{name}_jobs"] = len(found[name]["run_cpu"]) + len(found[name]["submit_cpu"])
    for key in found[first]:
        summary[f"{first}_vs_{second}_{key}"] = round(sum(found[first][key]) / sum(found[second][key]), 3)
    return summary


def images_for(argv: list[str], usage: str | None, label: str) -> tuple[str, str, str] | None:
    """From ``argv`` (the program and REV): (short commit, image of the harness at REV,
    image of this checkout), built if missing; None, said on stderr, for a wrong
    command line or when the two harnesses are the same."""
    if len(argv) != 2:
        print(usage, file=sys.stderr)
        return None
    rev = argv[1]
    sys.path[:0] = [str(REPO_ROOT), str(REPO_ROOT / "platform")]
    from sandbox.build import ensure_image

    commit = subprocess.run(["git", "rev-parse", "--short", rev], cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="dojo-harness-") as folder:
        earlier_image = ensure_image(harness_dir=harness_at(rev, Path(folder)))
    this_image = ensure_image()
    if earlier_image == this_image:
        print(f"[{label}] the harness at {rev} is this checkout's: nothing to compare", file=sys.stderr)
        return None
    return commit, earlier_image, this_image


def write_results(results: dict[str, Any], path: Path) -> None:
    """Print ``results``, one per line, and write them to ``path`` as JSON."""
    for key, value in results.items():
        print(f"  {key.ljust(44)} {value}")
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(f"  written to {path.relative_to(REPO_ROOT)}")


def main() -> int:
    found_images = images_for(sys.argv, __doc__, "harness-ab")
    if found_images is None:
        return 2
    commit, earlier_image, this_image = found_images
    rounds = int(os.environ.get("BENCH_HARNESS_AB_ROUNDS", "5"))
    found = interleave({"this": this_image, "earlier": earlier_image}, rounds)
    results: dict[str, Any] = {"earlier_rev": commit, "earlier_image": earlier_image, "this_image": this_image, "rounds": rounds}
    results.update(summarize(found, "this", "earlier"))
    write_results(results, RESULTS_PATH)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
