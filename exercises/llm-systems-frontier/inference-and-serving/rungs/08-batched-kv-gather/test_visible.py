"""Visible tests: the worked example of the instructions."""

import numpy as np


def test_worked_example(solution):
    pages = np.arange(4 * 2 * 3, dtype=np.float32).reshape(4, 2, 3)
    got = solution.gather_kv(pages, [[2, 0], [3]], [3, 1])
    want = np.array(
        [
            [[12, 13, 14], [15, 16, 17], [0, 1, 2]],
            [[18, 19, 20], [0, 0, 0], [0, 0, 0]],
        ],
        dtype=np.float32,
    )
    assert isinstance(got, np.ndarray), f"gather_kv returned a {type(got).__name__}, not a numpy array"
    assert got.shape == want.shape and got.dtype == want.dtype, f"shape {got.shape} dtype {got.dtype}; want {want.shape} {want.dtype}"
    assert np.array_equal(got, want), f"got\n{got}\nwant\n{want}"
