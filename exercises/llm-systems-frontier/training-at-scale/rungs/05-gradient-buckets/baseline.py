"""The speed phase's baseline: each bucket grows by concatenation, one gradient at a time (never shown to learners)."""

from __future__ import annotations

import numpy as np


def pack_buckets(grads, bucket_cap_bytes):
    if type(bucket_cap_bytes) is not int or bucket_cap_bytes < 1:
        raise ValueError("bad bucket_cap_bytes")
    for grad in grads:
        if grad.dtype != grads[0].dtype or grad.dtype.name not in ("float16", "float32", "float64") or grad.size == 0:
            raise ValueError("bad gradient")
    buckets = []
    bucket = None
    for grad in reversed(grads):
        # Each append copies the whole bucket so far: a bucket of k gradients costs about k * k / 2 gradient copies.
        bucket = grad.reshape(-1).copy() if bucket is None else np.concatenate([bucket, grad.reshape(-1)])
        if bucket.nbytes >= bucket_cap_bytes:
            buckets.append(bucket)
            bucket = None
    if bucket is not None:
        buckets.append(bucket)
    return buckets
