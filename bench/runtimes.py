"""What gVisor costs: the same cold Run and Submit under runc and under runsc, in one run.

``make bench`` calls ``measure_runtimes``; ``python -m bench.runtimes`` runs
it alone. Containers start cold (no pool) on both sides, so the figures
compare the runtimes and nothing else.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
RUNG = REPO_ROOT / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"


def _grade(runner: Any, mode: str) -> dict[str, float]:
    from sandbox.jobs import Job

    reference = (RUNG / "reference.py").read_text()
    tests = {"test_hidden.py": (RUNG / "test_hidden.py").read_text()} if mode == "submit" else {"test_visible.py": (RUNG / "test_visible.py").read_text()}
    result = runner.run(Job(mode=mode, source=reference, tests=tests, reference=reference if mode == "submit" else ""))  # type: ignore[arg-type]
    if result.outcome != "passed":
        raise RuntimeError(f"the reference did not pass under {runner.runtime or 'runc'}: {result.outcome} {result.message[:300]}")
    return dict(result.timings)


def measure_runtimes(image: str, runs: int = 5) -> dict[str, Any]:
    """p50 of total time, start-up and test time per runtime, and runsc / runc ratios."""
    from sandbox.runner import SandboxRunner

    found: dict[str, Any] = {}
    for runtime in ("runc", "runsc"):
        runner = SandboxRunner(image, runtime="" if runtime == "runc" else runtime, startup_s=120)
        try:
            for mode in ("run", "submit"):
                samples = [_grade(runner, mode) for _ in range(runs)]
                for key in ("total_s", "harness_ready_s", "run_s"):
                    found[f"{runtime}_{mode}_{key}_p50"] = round(statistics.median(sample[key] for sample in samples), 3)
        finally:
            runner.close()
    for mode in ("run", "submit"):
        found[f"runsc_vs_runc_{mode}_total"] = round(found[f"runsc_{mode}_total_s_p50"] / found[f"runc_{mode}_total_s_p50"], 2)
        found[f"runsc_vs_runc_{mode}_tests"] = round(found[f"runsc_{mode}_run_s_p50"] / found[f"runc_{mode}_run_s_p50"], 2)
    return found


def main() -> int:
    sys.path[:0] = [str(REPO_ROOT), str(REPO_ROOT / "platform")]
    from sandbox.build import ensure_image

    for key, value in measure_runtimes(ensure_image()).items():
        print(f"  {key.ljust(36)} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
