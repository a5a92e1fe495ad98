"""Data-parallel step time: the bucket boundaries listed first, then one pass over them with two clocks."""

import math


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _validate(ints=(), positives=(), non_negatives=()):
    for name, value in ints:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}: expected a positive int, got {value!r}")
    for name, value in positives:
        if not _is_number(value) or not math.isfinite(value) or not value > 0:
            raise ValueError(f"{name}: expected a positive finite number, got {value!r}")
    for name, value in non_negatives:
        if not _is_number(value) or not math.isfinite(value) or not value >= 0:
            raise ValueError(f"{name}: expected a finite number >= 0, got {value!r}")


def _allreduce(nbytes, n_gpus, bandwidth, latency):
    steps = n_gpus - 1
    return 2.0 * steps * nbytes / n_gpus / bandwidth + 2.0 * steps * latency


def ring_allreduce_seconds(nbytes, n_gpus, bandwidth, latency=0.0):
    _validate(ints=(("nbytes", nbytes), ("n_gpus", n_gpus)), positives=(("bandwidth", bandwidth),), non_negatives=(("latency", latency),))
    return float(_allreduce(nbytes, n_gpus, bandwidth, latency))


def data_parallel_step(forward_s, backward_s, grad_bytes, n_gpus, bandwidth, latency=0.0, bucket_bytes=None):
    ints = [("grad_bytes", grad_bytes), ("n_gpus", n_gpus)]
    if bucket_bytes is not None:
        ints.append(("bucket_bytes", bucket_bytes))
    _validate(ints=ints, positives=(("bandwidth", bandwidth),), non_negatives=(("forward_s", forward_s), ("backward_s", backward_s), ("latency", latency)))
    step = grad_bytes if bucket_bytes is None or bucket_bytes >= grad_bytes else bucket_bytes
    # The byte each bucket ends at, in order: the last one may hold less.
    ends = list(range(step, grad_bytes, step)) + [grad_bytes]
    compute_end = float(forward_s) + float(backward_s)
    comm_end = 0.0
    start_byte = 0
    for end in ends:
        ready = forward_s + backward_s * end / grad_bytes
        comm_end = max(ready, comm_end) + _allreduce(end - start_byte, n_gpus, bandwidth, latency)
        start_byte = end
    exposed = max(0.0, comm_end - compute_end)
    return {"step_s": compute_end + exposed, "exposed_comm_s": exposed, "buckets": len(ends)}
