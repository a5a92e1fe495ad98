"""Collects each bucket's flattened gradients in a list and concatenates the list once, when the bucket closes."""

import numpy as np


def pack_buckets(grads, bucket_cap_bytes):
    if isinstance(bucket_cap_bytes, bool) or not isinstance(bucket_cap_bytes, int) or bucket_cap_bytes <= 0:
        raise ValueError("bucket_cap_bytes must be a positive int")
    dtypes = {grad.dtype for grad in grads}
    if len(dtypes) > 1:
        raise ValueError("the gradients mix dtypes")
    if dtypes and dtypes.pop() not in (np.float16, np.float32, np.float64):
        raise ValueError("gradients must be float16, float32 or float64")
    if any(grad.size == 0 for grad in grads):
        raise ValueError("an empty gradient")
    buckets, pieces, filled = [], [], 0
    for index in range(len(grads) - 1, -1, -1):
        flat = grads[index].ravel()
        pieces.append(flat)
        filled += flat.nbytes
        if filled >= bucket_cap_bytes:
            buckets.append(np.concatenate(pieces))
            pieces, filled = [], 0
    if pieces:
        buckets.append(np.concatenate(pieces))
    return buckets
