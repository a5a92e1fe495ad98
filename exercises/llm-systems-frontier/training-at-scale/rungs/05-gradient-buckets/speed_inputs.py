"""The speed phase's inputs: a model's gradients, many of them, of a few thousand values each, some of them matrices."""

import numpy as np


def make_inputs(rng, n_grads, min_elems, max_elems, dtype, bucket_cap_bytes):
    grads = []
    for _ in range(n_grads):
        rows = int(rng.choice([1, 1, 4, 16]))
        cols = max(1, int(rng.integers(min_elems, max_elems + 1)) // rows)
        shape = (cols,) if rows == 1 else (rows, cols)
        grads.append(rng.standard_normal(shape, dtype=np.float32).astype(dtype, copy=False))
    return [grads, bucket_cap_bytes]


def check(got, expected):
    assert isinstance(got, list), f"pack_buckets returned a {type(got).__name__}, not a list"
    assert len(got) == len(expected), f"{len(got)} buckets, want {len(expected)}"
    for number, (bucket, want) in enumerate(zip(got, expected)):
        assert isinstance(bucket, np.ndarray), f"bucket {number} is a {type(bucket).__name__}, not a numpy array"
        assert bucket.shape == want.shape and bucket.dtype == want.dtype, f"bucket {number}: shape {bucket.shape} dtype {bucket.dtype}; want {want.shape} {want.dtype}"
        assert np.array_equal(bucket, want), f"bucket {number}: values differ"
