"""What transparent huge pages for the harness's heap (SANDBOX_HUGE_PAGES) change, in one run.

Usage (from the repository root)::

    .venv/bin/python -m bench.experiments.hugepages

``bench.ab`` grades the burst's jobs on two pinned worker slots, once with
the containers' glibc asking for huge pages and once without, taking turns
(``BENCH_HUGE_ROUNDS`` rounds of each, 3 by default), then the bench's
Submits on one slot each way. Printed: jobs per minute, container CPU
seconds per job and Submit p50 on each side, with huge / small ratios;
written to bench/experiments/hugepages-results.json, with the host's THP mode (in
``never`` the two sides are the same).

Why it matters: a Submit re-runs every hidden test in a fresh fork of a
process that has imported torch (about 85 MiB of malloc heap); each fork
copies, and each exit frees, one page-table entry per page of it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
THP_MODE = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def thp_mode() -> str:
    """The host's THP mode: the bracketed word of the kernel's setting ("madvise", "always", "never")."""
    try:
        text = THP_MODE.read_text()
    except OSError:
        return "unknown"
    start, end = text.find("["), text.find("]")
    return text[start + 1 : end] if 0 <= start < end else "unknown"


def main() -> int:
    sys.path[:0] = [str(REPO_ROOT), str(REPO_ROOT / "platform")]
    from bench.ab import compare, report
    from sandbox.build import ensure_image

    sides = {"huge": lambda slot: {"first_core": slot, "huge_pages": True}, "small": lambda slot: {"first_core": slot, "huge_pages": False}}
    found = {"host_thp_mode": thp_mode()}
    found.update(compare(ensure_image(), sides, rounds=int(os.environ.get("BENCH_HUGE_ROUNDS", "3")), label="hugepages"))
    report(found, REPO_ROOT / "bench" / "experiments" / "hugepages-results.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
