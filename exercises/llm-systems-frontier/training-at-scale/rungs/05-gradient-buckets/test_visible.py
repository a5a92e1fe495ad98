"""Visible tests: the worked example of the instructions."""

import numpy as np


def test_worked_example(solution):
    grads = [
        np.array([1, 2], dtype=np.float32),
        np.array([[3, 4], [5, 6]], dtype=np.float32),
        np.array([7], dtype=np.float32),
        np.array([8, 9, 10], dtype=np.float32),
    ]
    got = solution.pack_buckets(grads, 12)
    want = [np.array([8, 9, 10], np.float32), np.array([7, 3, 4, 5, 6], np.float32), np.array([1, 2], np.float32)]
    assert isinstance(got, list), f"pack_buckets returned a {type(got).__name__}, not a list"
    assert len(got) == len(want), f"{len(got)} buckets, want {len(want)}: {got}"
    for number, (bucket, expected) in enumerate(zip(got, want)):
        assert isinstance(bucket, np.ndarray), f"bucket {number} is a {type(bucket).__name__}, not a numpy array"
        assert bucket.dtype == expected.dtype, f"bucket {number}: dtype {bucket.dtype}, want {expected.dtype}"
        assert np.array_equal(bucket, expected), f"bucket {number}: {bucket}, want {expected}"
