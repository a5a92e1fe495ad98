"""Data-parallel step time.

Fill in the two functions. See the instructions for the ring all-reduce
formula, how buckets are scheduled and the rules for bad input (ValueError).
"""

from __future__ import annotations


def ring_allreduce_seconds(nbytes: int, n_gpus: int, bandwidth: float, latency: float = 0.0) -> float:
    """Seconds for a ring all-reduce: 2(n-1)/n * nbytes / bandwidth + 2(n-1) * latency."""
    raise NotImplementedError


def data_parallel_step(
    forward_s: float,
    backward_s: float,
    grad_bytes: int,
    n_gpus: int,
    bandwidth: float,
    latency: float = 0.0,
    bucket_bytes: int | None = None,
) -> dict:
    """Simulate one step: {"step_s": float, "exposed_comm_s": float, "buckets": int}."""
    raise NotImplementedError
