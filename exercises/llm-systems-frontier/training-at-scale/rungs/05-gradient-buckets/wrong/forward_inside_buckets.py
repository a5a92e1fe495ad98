"""Reference solution: plan the buckets first, then copy each gradient once into its bucket's preallocated buffer."""

from __future__ import annotations

import numpy as np

FLOAT_DTYPES = ("float16", "float32", "float64")


def pack_buckets(grads, bucket_cap_bytes):
    """Flat gradient buckets, filled from the last gradient to the first; a bucket closes once it holds bucket_cap_bytes or more."""
    if type(bucket_cap_bytes) is not int or bucket_cap_bytes < 1:
        raise ValueError(f"bucket_cap_bytes is a positive int, not {bucket_cap_bytes!r}")
    if not grads:
        return []
    dtype = grads[0].dtype
    if dtype.name not in FLOAT_DTYPES:
        raise ValueError(f"gradients are float16, float32 or float64, not {dtype}")
    for grad in grads:
        if grad.dtype != dtype:
            raise ValueError(f"every gradient has one dtype: {grad.dtype} beside {dtype}")
        if not grad.size:
            raise ValueError("a gradient with no elements")
    # The plan: which gradients each bucket holds, in the order the backward pass produces them.
    plan, members, nbytes = [], [], 0
    for grad in reversed(grads):
        members.append(grad)
        nbytes += grad.nbytes
        if nbytes >= bucket_cap_bytes:
            plan.append(members[::-1])
            members, nbytes = [], 0
    if members:
        plan.append(members[::-1])
    # One buffer per bucket, allocated once; each gradient is copied once, into its slice.
    buckets = []
    for members in plan:
        buffer = np.empty(sum(grad.size for grad in members), dtype=dtype)
        offset = 0
        for grad in members:
            buffer[offset : offset + grad.size] = grad.ravel()
            offset += grad.size
        buckets.append(buffer)
    return buckets
