"""Wrong solution: returns step_s and exposed_comm_s as ints when int times meet no communication (one GPU)."""
from __future__ import annotations

import math


def _pos_int(v, name):
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ValueError(f"{name} must be a positive int")


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _bw(b):
    if not _num(b) or b <= 0:
        raise ValueError("bandwidth must be positive and finite")


def _time(v, name):
    if not _num(v) or v < 0:
        raise ValueError(f"{name} must be a finite number >= 0")


def _ring(nbytes, n, bandwidth, latency):
    return 2 * (n - 1) / n * nbytes / bandwidth + 2 * (n - 1) * latency


def ring_allreduce_seconds(nbytes: int, n_gpus: int, bandwidth: float, latency: float = 0.0) -> float:
    _pos_int(nbytes, "nbytes")
    _pos_int(n_gpus, "n_gpus")
    _bw(bandwidth)
    _time(latency, "latency")
    return float(_ring(nbytes, n_gpus, bandwidth, latency))


def data_parallel_step(forward_s, backward_s, grad_bytes, n_gpus, bandwidth, latency=0.0, bucket_bytes=None) -> dict:
    _time(forward_s, "forward_s")
    _time(backward_s, "backward_s")
    _pos_int(grad_bytes, "grad_bytes")
    _pos_int(n_gpus, "n_gpus")
    _bw(bandwidth)
    _time(latency, "latency")
    if bucket_bytes is not None:
        _pos_int(bucket_bytes, "bucket_bytes")
    compute_end = forward_s + backward_s
    if bucket_bytes is None or bucket_bytes >= grad_bytes:
        sizes = [grad_bytes]
    else:
        full, rest = divmod(grad_bytes, bucket_bytes)
        sizes = [bucket_bytes] * full + ([rest] if rest else [])
    comm_end = 0.0
    done = 0
    for size in sizes:
        done += size
        ready = forward_s + backward_s * done / grad_bytes
        start = max(ready, comm_end)
        comm_end = start + _ring(size, n_gpus, bandwidth, latency)
    step = max(compute_end, comm_end)
    return {"step_s": step, "exposed_comm_s": step - compute_end, "buckets": len(sizes)}
