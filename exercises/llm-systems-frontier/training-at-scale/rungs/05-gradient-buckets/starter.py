"""Pack a model's gradients into flat buckets for the all-reduce.

Fill in pack_buckets. It is timed against a packer that grows each bucket by
concatenation: it must be at least 1.5x as fast, so copy each gradient only once.
"""

from __future__ import annotations

import numpy as np


def pack_buckets(grads, bucket_cap_bytes):
    """The gradients packed into flat buckets, from the last gradient to the first.

    grads:            list of numpy arrays, in the order the parameters were registered
    bucket_cap_bytes: int: a bucket is closed once it holds this many bytes or more
    """
    raise NotImplementedError
