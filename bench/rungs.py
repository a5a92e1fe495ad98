"""The rungs the bench grades, and how its burst mixes Runs and Submits.

Shared by ``bench.bench`` (the whole stack) and ``bench.ab`` (the sandbox
alone), so that neither has to import the other.
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
RUNGS_DIR = REPO_ROOT / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs"
RUNGS = {"kv-cache-size": RUNGS_DIR / "01-kv-cache-size", "gqa-kv-cache": RUNGS_DIR / "04-gqa-kv-cache"}
BURST_RUNGS = ["kv-cache-size", "quantization-arithmetic", "continuous-batching", "gqa-kv-cache", "paged-attention"]


def burst_kind(learner: int, rung: int) -> str:
    """Half the burst's jobs are Runs, half Submits, spread over learners and rungs."""
    return "submit" if (learner + rung) % 2 else "run"


def rung_dir(slug: str) -> Path:
    """The folder of the bench rung ``slug``."""
    return next(RUNGS_DIR.glob(f"*-{slug}"))
