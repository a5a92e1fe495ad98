"""Data-parallel step time, simulated in exact rational arithmetic and rounded to a float once at the end."""

import math
from fractions import Fraction


def _positive_int(value, name):
    if type(value) is not int or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def _finite_number(value, name, *, allow_zero):
    if type(value) not in (int, float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite int or float, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} is out of range: {value!r}")


def _ring_exact(nbytes, n_gpus, bandwidth, latency):
    volume = Fraction(2 * (n_gpus - 1) * nbytes, n_gpus)
    return volume / Fraction(bandwidth) + 2 * (n_gpus - 1) * Fraction(latency)


def ring_allreduce_seconds(nbytes, n_gpus, bandwidth, latency=0.0):
    _positive_int(nbytes, "nbytes")
    _positive_int(n_gpus, "n_gpus")
    _finite_number(bandwidth, "bandwidth", allow_zero=False)
    _finite_number(latency, "latency", allow_zero=True)
    return float(_ring_exact(nbytes, n_gpus, bandwidth, latency))


def data_parallel_step(forward_s, backward_s, grad_bytes, n_gpus, bandwidth, latency=0.0, bucket_bytes=None):
    # The bucket size first, then the sizes, then the times: each is checked before anything is computed.
    if bucket_bytes is not None:
        _positive_int(bucket_bytes, "bucket_bytes")
    _positive_int(grad_bytes, "grad_bytes")
    _positive_int(n_gpus, "n_gpus")
    _finite_number(bandwidth, "bandwidth", allow_zero=False)
    for value, name in ((forward_s, "forward_s"), (backward_s, "backward_s"), (latency, "latency")):
        _finite_number(value, name, allow_zero=True)
    size = grad_bytes if bucket_bytes is None else min(bucket_bytes, grad_bytes)
    forward, backward = Fraction(forward_s), Fraction(backward_s)
    compute_end = forward + backward
    link_free = Fraction(0)
    count = 0
    produced = 0
    while produced < grad_bytes:
        start, produced = produced, min(produced + size, grad_bytes)
        count += 1
        ready = forward + backward * Fraction(produced, grad_bytes)
        link_free = max(ready, link_free) + _ring_exact(produced - start, n_gpus, bandwidth, latency)
    end = max(compute_end, link_free)
    return {"step_s": float(end), "exposed_comm_s": float(end - compute_end), "buckets": count}
