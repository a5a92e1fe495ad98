"""The sizing sections of docs/operations.md, written from the benchmarks' JSON.

Two sections, each between its markers: the worker sizing from
bench/results.json (``make bench`` rewrites it after each run) and the
database at a year of use from bench/scale-results.json (``make
bench-scale`` rewrites it). The guide so quotes the last measurement
instead of one that went stale; tests/test_docs.py checks that the
committed guide and the committed results agree. By hand, after editing
either JSON file::

    .venv/bin/python -m bench.sizing           # rewrite both sections
    .venv/bin/python -m bench.sizing --check   # exit 1 if the guide is stale
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# The p95 targets of issue 61 for bench/scale.py's pages (it imports them from here).
PAGE_P95_TARGET_MS = 150.0
DASHBOARD_P95_TARGET_MS = 1000.0
REAPER_P95_TARGET_MS = 100.0
DASHBOARDS = ("module_dashboard", "rung_dashboard", "rejudge_preview")

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_PATH = REPO_ROOT / "bench" / "results.json"
SCALE_RESULTS_PATH = REPO_ROOT / "bench" / "scale-results.json"
GUIDE_PATH = REPO_ROOT / "docs" / "operations.md"
BEGIN = "<!-- sizing: written by `python -m bench.sizing` from bench/results.json -->"
END = "<!-- /sizing -->"
SCALE_BEGIN = "<!-- scale: written by `python -m bench.sizing` from bench/scale-results.json -->"
SCALE_END = "<!-- /scale -->"
# A load average from this on, at the start or end of a scale's measurement, marks its figures as taken under load.
# The bench itself keeps about one core busy (the fill just before, then one request at a time: a quiet
# run here read 1.2 at a year); on the 2-core machines of docs/operations.md, 2 means something else ran.
QUIET_LOAD = 2.0
HEADROOM = 1.5
CLASS_SIZE = 600
HOST_CORES = 8


def render(results: dict[str, Any]) -> str:
    """The paragraph, from a bench run's figures: jobs per minute per core and the worked example."""
    cores = int(results["floor_cores"])
    per_core = round(results["burst_per_min"] / cores)
    needed = math.ceil(CLASS_SIZE / per_core * HEADROOM)
    hosts = math.ceil(needed / HOST_CORES)
    return (
        f"Throughput comes from `make bench` (bench/results.json): a burst of {results['burst_total']}\n"
        f"jobs (Runs and Submits of five rungs, mixed) on a {cores}-core machine graded at\n"
        f"{results['burst_per_min']} jobs a minute, about **{per_core} jobs per minute per core** with\n"
        f"warm containers (a Run takes {results['run_p50_s']:.2f} s p50 through the stack, a Submit\n"
        f"{results['submit_p50_s']:.2f} s, at low load). Size worker cores as\n"
        "\n"
        f"    cores = peak jobs per minute / {per_core}, plus headroom (x{HEADROOM:g})\n"
        "\n"
        f"e.g. {CLASS_SIZE} learners in a class, each pressing Run or Submit once a minute at\n"
        f"the peak: {CLASS_SIZE} / {per_core} x {HEADROOM:g} = {needed} cores, say {hosts} worker host{'s' if hosts != 1 else ''}\n"
        f"of {HOST_CORES} cores with `-c {HOST_CORES}`. Re-measure with `make bench` on your worker hardware and\n"
        "your rungs: heavier rungs grade slower. Web processes are light by comparison\n"
        f"(the module page p50 {results['module_page_p50_s'] * 1000:.0f} ms in `make bench`)."
    )


# The pages of bench/scale.py: (what the guide calls it, who opens it). A page it does not know is listed by its name.
SCALE_PAGES = {
    "module_page": ("module page", "learner"),
    "workspace": ("workspace (hot rung)", "learner"),
    "attempt_history": ("attempt history", "learner"),
    "state_poll": ("state poll", "learner"),
    "gradebook": ("gradebook (50 learners)", "teacher"),
    "module_dashboard": ("module dashboard", "instructor"),
    "rung_dashboard": ("rung dashboard", "instructor"),
    "report_queue": ("problem report queue", "instructor"),
    "admin_submissions": ("admin submissions as the list opens", "admin"),
    "admin_submissions_filtered": ("admin submissions filtered by status and kind", "admin"),
    "admin_submissions_search": ("admin submissions searched by a learner's name", "admin"),
    "rejudge_preview": ("rejudge preview (100,000 results at a year)", "admin"),
    "reaper_sweep": ("reaper's sweep", "beat"),
}
MIB = 1024 * 1024


def _scale_name(scale: float) -> str:
    return "a year" if scale == 1 else f"1/{round(1 / scale)}" if scale < 1 else f"{scale:g} years"


def target_ms(name: str) -> float:
    """The p95 a page of bench/scale.py must meet (issue 61): the reaper's sweep, a dashboard, or any other page."""
    return REAPER_P95_TARGET_MS if name == "reaper_sweep" else DASHBOARD_P95_TARGET_MS if name in DASHBOARDS else PAGE_P95_TARGET_MS


def _requests(results: dict[str, Any], scale: float) -> int:
    # bench/scale.py writes one count for every scale; a merged file may hold one per scale.
    requests = results["requests"]
    return int(requests[str(scale)]) if isinstance(requests, dict) else int(requests)


def _ms(value: float) -> str:
    return f"{value:,.0f} ms" if value < 10_000 else f"{value / 1000:,.1f} s"


def _p95(value: float, target: float) -> str:
    return _ms(value) if value <= target else f"**{_ms(value)}**"


def render_scale(results: dict[str, Any]) -> str:
    """The database-at-scale section, from a ``make bench-scale`` run: p95 per page and scale, the disk, the scans."""
    scales = results["scales"]
    loads = [max(each.get("load_average", [0.0])) for each in scales]
    quiet = max(loads) < QUIET_LOAD
    heading = " | ".join(f"p95 at {_scale_name(each['scale'])} ({each['rows']['submissions']:,} submissions)" for each in scales)
    lines = [
        "`make bench-scale` (bench/scale-results.json) fills PostgreSQL with a year of a busy",
        "deployment, or a part of one, and times each page through gunicorn ("
        + ", ".join(f"{_requests(results, each['scale'])} requests a page at {_scale_name(each['scale'])}" for each in scales) + ").",
        ("Taken on a quiet machine" if quiet else "**Taken under load, not for the record**")
        + " (load average " + ", ".join(f"{load:.1f} at {_scale_name(each['scale'])}" for load, each in zip(loads, scales, strict=True))
        + "). A p95 over its target is in bold.",
        "",
        f"| page | opened by | {heading} | target |",
        "| --- | --- | " + " | ".join("---:" for _ in scales) + " | ---: |",
    ]
    names = [name for name in scales[-1]["pages"] if "p95_ms" in scales[-1]["pages"][name]]
    for name in names:
        label, who = SCALE_PAGES.get(name, (name.replace("_", " "), ""))
        cells = " | ".join(_p95(each["pages"][name]["p95_ms"], target_ms(name)) if name in each["pages"] else "" for each in scales)
        lines.append(f"| {label} | {who} | {cells} | {_ms(target_ms(name))} |")
    lines.append("")
    for each in scales:
        pages, rows = each["pages"], each["rows"]
        csv, load = pages.get("gradebook_csv"), pages.get("load_exercises")
        facts = [f"{rows['submissions']:,} submissions with {rows['test_rows']:,} test rows, filled in {each['fill_s']:g} s"]
        if csv:
            facts.append(f"the gradebook CSV streamed in {csv['s']:g} s, a web worker's peak RSS {csv['worker_peak_rss_kib_after'] // 1024} MiB")
        if load:
            facts.append(f"`load_exercises` {load['full_ms']:,} ms on the full database")
        disk = each.get("disk_bytes")
        facts.append(f"the database {disk['database'] / MIB:,.0f} MiB on disk (submissions {disk['grader_submission'] / MIB:,.0f} MiB, "
                     f"test rows {disk['grader_submissiontestresult'] / MIB:,.0f} MiB, indexes included)" if disk
                     else "its disk not measured (the run is older than the bench's disk figures)")
        scans = [SCALE_PAGES.get(name, (name, ""))[0] for name, found in each.get("explain", {}).items() if found["seq_scans_of_big_tables"]]
        facts.append("every query on an index" if not scans else f"a big table scanned sequentially by: {', '.join(scans)}")
        lines.append(f"- At {_scale_name(each['scale'])}: " + "; ".join(facts) + ".")
    return "\n".join(lines)


def _between(guide: str, begin: str, end: str, text: str) -> str:
    """``guide`` with the text between the markers ``begin`` and ``end`` replaced by ``text``."""
    head, found, rest = guide.partition(begin + "\n")
    _, found_end, tail = rest.partition(end)
    if not (found and found_end):
        raise ValueError(f"the markers {begin!r} and {end!r} are missing from {GUIDE_PATH.name}")
    return head + begin + "\n" + text + "\n" + end + tail


def rewrite(guide: str, results: dict[str, Any]) -> str:
    """``guide`` with the text between the sizing markers replaced by :func:`render`'s."""
    return _between(guide, BEGIN, END, render(results))


def rewrite_scale(guide: str, scale_results: dict[str, Any]) -> str:
    """``guide`` with the text between the scale markers replaced by :func:`render_scale`'s."""
    return _between(guide, SCALE_BEGIN, SCALE_END, render_scale(scale_results))


def written(guide: str, begin: str, end: str) -> str:
    """The text between ``begin`` and ``end`` in ``guide``."""
    return guide.split(begin + "\n", 1)[1].split("\n" + end, 1)[0]


def write_guide(results: dict[str, Any], guide_path: Path = GUIDE_PATH) -> None:
    guide_path.write_text(rewrite(guide_path.read_text(), results))


def write_scale_guide(scale_results: dict[str, Any], guide_path: Path = GUIDE_PATH) -> None:
    guide_path.write_text(rewrite_scale(guide_path.read_text(), scale_results))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write docs/operations.md's sizing sections from bench/results.json and bench/scale-results.json.")
    parser.add_argument("--check", action="store_true", help="Write nothing; exit 1 if a section differs from its JSON.")
    options = parser.parse_args(argv)
    results, scale_results = json.loads(RESULTS_PATH.read_text()), json.loads(SCALE_RESULTS_PATH.read_text())
    guide = GUIDE_PATH.read_text()
    fresh = rewrite_scale(rewrite(guide, results), scale_results)
    if options.check:
        if fresh != guide:
            print(f"  {GUIDE_PATH.relative_to(REPO_ROOT)} is stale: run `.venv/bin/python -m bench.sizing`")
            return 1
        return 0
    GUIDE_PATH.write_text(fresh)
    print(f"  sizing written to {GUIDE_PATH.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
