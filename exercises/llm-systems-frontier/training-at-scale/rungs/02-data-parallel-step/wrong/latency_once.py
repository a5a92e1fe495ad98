"""Wrong solution: pays the latency once per all-reduce instead of at each of the 2(n-1) ring steps."""

from __future__ import annotations

import math


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def _number(value: object, name: str, *, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'positive' if positive else 'zero or more'}, got {value!r}")
    return float(value)


def ring_allreduce_seconds(nbytes: int, n_gpus: int, bandwidth: float, latency: float = 0.0) -> float:
    """Seconds to all-reduce `nbytes` over a ring of `n_gpus` GPUs."""
    nbytes = _positive_int(nbytes, "nbytes")
    n_gpus = _positive_int(n_gpus, "n_gpus")
    bandwidth = _number(bandwidth, "bandwidth", positive=True)
    latency = _number(latency, "latency", positive=False)
    volume = 2 * (n_gpus - 1) / n_gpus * nbytes  # reduce-scatter, then all-gather
    return volume / bandwidth + (latency if n_gpus > 1 else 0.0)


def data_parallel_step(
    forward_s: float,
    backward_s: float,
    grad_bytes: int,
    n_gpus: int,
    bandwidth: float,
    latency: float = 0.0,
    bucket_bytes: int | None = None,
) -> dict:
    """Step time when gradients are all-reduced after the backward pass, or in buckets during it."""
    forward_s = _number(forward_s, "forward_s", positive=False)
    backward_s = _number(backward_s, "backward_s", positive=False)
    grad_bytes = _positive_int(grad_bytes, "grad_bytes")
    n_gpus = _positive_int(n_gpus, "n_gpus")
    bandwidth = _number(bandwidth, "bandwidth", positive=True)
    latency = _number(latency, "latency", positive=False)
    if bucket_bytes is None:
        bucket_bytes = grad_bytes  # one bucket: the whole gradient once the backward pass is over
    bucket_bytes = _positive_int(bucket_bytes, "bucket_bytes")

    compute_end = forward_s + backward_s
    comm_free_at = 0.0  # one communication stream: all-reduces run one after another
    done = 0
    buckets = 0
    while done < grad_bytes:
        size = min(bucket_bytes, grad_bytes - done)
        done += size
        buckets += 1
        ready = forward_s + backward_s * done / grad_bytes  # gradients appear evenly during the backward pass
        start = max(ready, comm_free_at)
        comm_free_at = start + ring_allreduce_seconds(size, n_gpus, bandwidth, latency)
    step = max(compute_end, comm_free_at)
    return {"step_s": step, "exposed_comm_s": step - compute_end, "buckets": buckets}
