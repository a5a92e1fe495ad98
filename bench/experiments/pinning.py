"""What pinning a worker slot's containers to one core (SANDBOX_PIN_CPUS) changes, in one run.

Usage (from the repository root)::

    .venv/bin/python -m bench.experiments.pinning

``bench.ab`` grades the burst's jobs on two worker slots, once with slot i
pinned to core i and once with the kernel placing every process, taking
turns (``BENCH_PIN_ROUNDS`` rounds of each, 3 by default), then the bench's
Submits on one slot each way. Printed: jobs per minute, container CPU
seconds per job and Submit p50 on each side, with pinned / unpinned ratios;
written to bench/experiments/pinning-results.json. Both sides keep the other settings
at their defaults.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    sys.path[:0] = [str(REPO_ROOT), str(REPO_ROOT / "platform")]
    from bench.ab import compare, report
    from sandbox.build import ensure_image

    sides = {"pinned": lambda slot: {"first_core": slot}, "unpinned": lambda slot: {"first_core": None}}
    found = compare(ensure_image(), sides, rounds=int(os.environ.get("BENCH_PIN_ROUNDS", "3")), label="pinning")
    report(found, REPO_ROOT / "bench" / "experiments" / "pinning-results.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
