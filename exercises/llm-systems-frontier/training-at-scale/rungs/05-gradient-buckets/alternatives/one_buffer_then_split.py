"""Copies every gradient, last first, into one flat buffer, finds the bucket boundaries from the sizes, and cuts the buffer there."""

import numpy as np


def pack_buckets(grads, bucket_cap_bytes):
    if type(bucket_cap_bytes) is not int:
        raise ValueError("the cap is an int")
    if bucket_cap_bytes < 1:
        raise ValueError("the cap is positive")
    if not grads:
        return []
    kinds = [grad.dtype.name for grad in grads]
    if kinds[0] not in ("float16", "float32", "float64") or kinds.count(kinds[0]) != len(kinds):
        raise ValueError("one floating dtype for every gradient")
    sizes = [grad.size for grad in reversed(grads)]
    if min(sizes) == 0:
        raise ValueError("a gradient without elements")
    flat = np.concatenate([grad.reshape(-1) for grad in reversed(grads)])
    itemsize = flat.itemsize
    cuts, start, since_cut = [], 0, 0
    for size in sizes:
        start += size
        since_cut += size * itemsize
        if since_cut >= bucket_cap_bytes:
            cuts.append(start)
            since_cut = 0
    if cuts and cuts[-1] == flat.size:
        cuts.pop()
    return np.split(flat, cuts)
