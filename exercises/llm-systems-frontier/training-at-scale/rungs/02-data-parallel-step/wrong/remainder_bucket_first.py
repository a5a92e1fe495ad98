"""Data-parallel step time."""

from __future__ import annotations

import math


def _positive_int(value, name):
    if type(value) is not int or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_bandwidth(bandwidth):
    if not _number(bandwidth) or not math.isfinite(bandwidth) or bandwidth <= 0:
        raise ValueError(f"bandwidth must be a positive finite number, got {bandwidth!r}")


def _check_time(value, name):
    if not _number(value) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


def _allreduce(nbytes, n, bandwidth, latency):
    volume = 2 * (n - 1) / n * nbytes
    return volume / bandwidth + 2 * (n - 1) * latency


def ring_allreduce_seconds(nbytes: int, n_gpus: int, bandwidth: float, latency: float = 0.0) -> float:
    _positive_int(nbytes, "nbytes")
    _positive_int(n_gpus, "n_gpus")
    _check_bandwidth(bandwidth)
    _check_time(latency, "latency")
    return float(_allreduce(nbytes, n_gpus, bandwidth, latency))


def data_parallel_step(
    forward_s: float,
    backward_s: float,
    grad_bytes: int,
    n_gpus: int,
    bandwidth: float,
    latency: float = 0.0,
    bucket_bytes: int | None = None,
) -> dict:
    _check_time(forward_s, "forward_s")
    _check_time(backward_s, "backward_s")
    _positive_int(grad_bytes, "grad_bytes")
    _positive_int(n_gpus, "n_gpus")
    _check_bandwidth(bandwidth)
    _check_time(latency, "latency")
    if bucket_bytes is not None:
        _positive_int(bucket_bytes, "bucket_bytes")

    compute_end = forward_s + backward_s
    if bucket_bytes is None:
        sizes = [grad_bytes]
    else:
        sizes = []
        left = grad_bytes
        while left > 0:
            sizes.append(min(bucket_bytes, left))
            left -= sizes[-1]
        sizes.reverse()  # DDP-style: the odd-sized bucket comes first

    comm_end = 0.0
    produced = 0
    for size in sizes:
        produced += size
        ready = forward_s + backward_s * produced / grad_bytes
        start = max(ready, comm_end)
        comm_end = start + _allreduce(size, n_gpus, bandwidth, latency)
    step = float(max(compute_end, comm_end))
    return {"step_s": step, "exposed_comm_s": float(step - compute_end), "buckets": len(sizes)}
