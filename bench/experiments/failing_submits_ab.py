"""Failing Submits on this checkout's sandbox harness against an earlier one's, job by job.

Usage (from the repository root)::

    .venv/bin/python -m bench.experiments.failing_submits_ab REV      # e.g. HEAD~1, or a commit

Most Submits a class sends fail, and ``bench.harness_ab`` grades only the
references. This grades every shipped rung's starter and known-wrong
solutions as Submits against the rung's hidden tests, once on each side:
the sandbox image of ``sandbox/harness`` as it was at ``REV`` (built from
``git archive``, as ``bench.harness_ab`` does) and this checkout's. One
pinned runner per image, both on core 0, take turns job by job (the side
that goes first alternates), so a machine whose speed drifts moves both
alike. Jobs get the default limits, so that a warm pooled container serves
every one of them on both sides.

Printed and written to bench/experiments/failing-submits-ab-results.json: container CPU
and wall seconds per Submit on each side with this / earlier ratios (of the
totals, and the median of the per-job ratios), per rung; and the verdict
that matters first: every job got the same grade on both sides (outcome,
each test's outcome, and the tests named as keeping state between calls).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import Counter
from typing import Any

from bench.harness_ab import REPO_ROOT, images_for, side_runners, write_results

RESULTS_PATH = REPO_ROOT / "bench" / "experiments" / "failing-submits-ab-results.json"
RUNGS_DIR = REPO_ROOT / "exercises" / "llm-systems-frontier"


def failing_jobs() -> list[tuple[str, Any]]:
    """(rung/who, Job) for the starter and each wrong solution of every shipped rung, as Submits."""
    from sandbox.jobs import Job

    jobs = []
    for folder in sorted(RUNGS_DIR.glob("*/rungs/*")):
        slug = folder.name.split("-", 1)[1]
        reference = (folder / "reference.py").read_text()
        hidden = (folder / "test_hidden.py").read_text()
        sources = [("starter", folder / "starter.py"), *((path.stem, path) for path in sorted((folder / "wrong").glob("*.py")))]
        for who, path in sources:
            jobs.append((f"{slug}/{who}", Job(mode="submit", source=path.read_text(), tests={"test_hidden.py": hidden}, reference=reference)))
    return jobs


def grade_of(result: Any) -> dict[str, Any]:
    """What the learner is told: the outcome, each test's outcome, the state-leak notes."""
    return {"outcome": result.outcome, "tests": {case.name: case.outcome for case in result.tests}, "state_leaks": sorted(result.state_leaks)}


def interleave(images: dict[str, str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Each failing Submit once per side, the sides taking turns job by job."""
    from bench.ab import wait_warm
    from bench.cpu_split import _docker_ns

    names = list(images)
    runners = side_runners(images)
    found: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in names}
    try:
        jobs = failing_jobs()
        for number, (key, one_job) in enumerate(jobs):
            for name in names if number % 2 == 0 else names[::-1]:
                wait_warm(runners[name])
                cpu_before, started = _docker_ns()[0], time.perf_counter()
                result = runners[name].run(one_job)
                found[name][key] = {
                    "wall_s": time.perf_counter() - started,
                    "cpu_s": _docker_ns()[0] - cpu_before,
                    "grade": grade_of(result),
                    "replayed": result.rerun_replayed,
                }
            if number % 20 == 19:
                print(f"[failing-submits-ab] {number + 1} of {len(jobs)} jobs", flush=True)
    finally:
        for slot_runner in runners.values():
            slot_runner.close()
    return found


def summarize(found: dict[str, dict[str, dict[str, Any]]], first: str, second: str) -> dict[str, Any]:
    keys = list(found[first])
    differ = [key for key in keys if found[first][key]["grade"] != found[second][key]["grade"]]
    summary: dict[str, Any] = {
        "jobs": len(keys),
        "outcomes": dict(Counter(entry["grade"]["outcome"] for entry in found[first].values())),
        "same_grade_on_both_sides": not differ,
        "grades_that_differ": differ,
        f"{first}_replayed_tests": sum(found[first][key]["replayed"] for key in keys),
        f"{second}_replayed_tests": sum(found[second][key]["replayed"] for key in keys),
    }
    for measure in ("cpu_s", "wall_s"):
        for name in (first, second):
            values = [found[name][key][measure] for key in keys]
            summary[f"{name}_{measure}_mean"] = round(statistics.fmean(values), 4)
            summary[f"{name}_{measure}_p50"] = round(statistics.median(values), 4)
        ratios = [found[first][key][measure] / found[second][key][measure] for key in keys]
        summary[f"{first}_vs_{second}_{measure}_total"] = round(sum(found[first][key][measure] for key in keys) / sum(found[second][key][measure] for key in keys), 3)
        summary[f"{first}_vs_{second}_{measure}_median_of_ratios"] = round(statistics.median(ratios), 3)
    rungs = sorted({key.split("/", 1)[0] for key in keys})
    summary["cpu_s_by_rung"] = {
        rung: {name: round(sum(found[name][key]["cpu_s"] for key in keys if key.startswith(rung + "/")), 2) for name in (first, second)} for rung in rungs
    }
    return summary


def main() -> int:
    found_images = images_for(sys.argv, __doc__, "failing-submits-ab")
    if found_images is None:
        return 2
    commit, earlier_image, this_image = found_images
    found = interleave({"this": this_image, "earlier": earlier_image})
    results: dict[str, Any] = {"earlier_rev": commit, "earlier_image": earlier_image, "this_image": this_image}
    results.update(summarize(found, "this", "earlier"))
    write_results(results, RESULTS_PATH)
    if not results["same_grade_on_both_sides"]:
        print(f"[failing-submits-ab] FAIL: {len(results['grades_that_differ'])} job(s) graded differently", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
