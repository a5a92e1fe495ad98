"""The sizing paragraph of docs/operations.md, written from bench/results.json.

``make bench`` rewrites it after each run, so the guide quotes the last
measurement instead of one that went stale; tests/test_docs.py checks that
the committed guide and the committed results agree. By hand::

    .venv/bin/python -m bench.sizing
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_PATH = REPO_ROOT / "bench" / "results.json"
GUIDE_PATH = REPO_ROOT / "docs" / "operations.md"
BEGIN = "<!-- sizing: written by `python -m bench.sizing` from bench/results.json -->"
END = "<!-- /sizing -->"
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


def rewrite(guide: str, results: dict[str, Any]) -> str:
    """``guide`` with the text between the sizing markers replaced by :func:`render`'s."""
    head, found, rest = guide.partition(BEGIN + "\n")
    _, found_end, tail = rest.partition("\n" + END)
    if not (found and found_end):
        raise ValueError(f"the sizing markers are missing from {GUIDE_PATH.name}")
    return head + BEGIN + "\n" + render(results) + "\n" + END + tail


def write_guide(results: dict[str, Any], guide_path: Path = GUIDE_PATH) -> None:
    guide_path.write_text(rewrite(guide_path.read_text(), results))


def main() -> int:
    write_guide(json.loads(RESULTS_PATH.read_text()))
    print(f"  sizing written to {GUIDE_PATH.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
