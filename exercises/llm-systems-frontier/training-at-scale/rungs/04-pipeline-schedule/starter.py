"""Pipeline schedules: GPipe and 1F1B.

Fill in the two functions. See the instructions for each stage's list of
operations, the dependency rule and what the result holds.
"""

from __future__ import annotations


def bubble_fraction(stages: int, micro_batches: int) -> float:
    """(p - 1) / (m + p - 1): the idle share of a step."""
    raise NotImplementedError


def simulate_pipeline(stages: int, micro_batches: int, schedule: str) -> dict:
    """Simulate "gpipe" or "1f1b" slot by slot.

    Returns {"timeline": [[str per slot] per stage], "total_slots": int,
             "bubble_fraction": float, "peak_in_flight": [int per stage]}.
    """
    raise NotImplementedError
