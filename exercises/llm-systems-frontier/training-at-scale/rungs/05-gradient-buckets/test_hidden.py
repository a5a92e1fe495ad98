"""Hidden tests: order, the closing rule, unsplit gradients, bytes, shapes, dtypes, bad input, and generated models."""

import random

import numpy as np
import reference
from grading import job_seed


def _model(shapes, dtype=np.float32):
    # Values 1, 2, 3... across the whole model, so a value out of place shows; float16 holds them exactly up to 2048.
    grads, first = [], 1
    for shape in shapes:
        count = int(np.prod(shape, dtype=np.int64))
        grads.append(np.arange(first, first + count).reshape(shape).astype(dtype))
        first += count
    return grads


def _same(got, want, what):
    assert isinstance(got, list), f"{what}: returned a {type(got).__name__}, not a list"
    sizes = [bucket.size for bucket in want]
    assert len(got) == len(want), f"{what}: {len(got)} buckets, want {len(want)} of {sizes} values"
    for number, (bucket, expected) in enumerate(zip(got, want)):
        assert isinstance(bucket, np.ndarray), f"{what}: bucket {number} is a {type(bucket).__name__}, not a numpy array"
        assert bucket.shape == expected.shape, f"{what}: bucket {number} has shape {bucket.shape}, want {expected.shape} (buckets of {sizes} values)"
        assert bucket.dtype == expected.dtype, f"{what}: bucket {number} is {bucket.dtype}, want {expected.dtype}"
        assert np.array_equal(bucket, expected), f"{what}: bucket {number} holds {bucket.tolist()}, want {expected.tolist()}"


def _expect(sizes_by_bucket, dtype=np.float32):
    # Buckets given as lists of values.
    return [np.array(values, dtype=dtype) for values in sizes_by_bucket]


def test_the_last_gradient_goes_first(solution):
    grads = _model([(3,), (2,), (4,)])
    _same(solution.pack_buckets(grads, 10**6), _expect([[6, 7, 8, 9, 4, 5, 1, 2, 3]]), "one bucket with room for all three")
    _same(solution.pack_buckets(grads, 1), _expect([[6, 7, 8, 9], [4, 5], [1, 2, 3]]), "a cap of 1 byte: one bucket per gradient")


def test_a_bucket_closes_once_it_reaches_the_cap(solution):
    # Taken last first, the gradients are 2, 3, 2 and 1 values: 8, 12, 8 and 4 bytes.
    grads = _model([(1,), (2,), (3,), (2,)])
    for cap in (8, 9, 20, 21, 32, 33):
        _same(solution.pack_buckets(grads, cap), reference.pack_buckets(grads, cap), f"gradients of 8, 12, 8, 4 bytes (last first), cap {cap} bytes")


def test_a_gradient_is_never_split(solution):
    # Taken last first: 1 value, 100 values, 1 value, then 100 values again.
    grads = _model([(10, 10), (1,), (100,), (1,)])
    for cap in (4, 8, 16, 400, 404):
        _same(solution.pack_buckets(grads, cap), reference.pack_buckets(grads, cap), f"gradients of 4, 400, 4, 400 bytes (last first), cap {cap} bytes")


def test_the_cap_counts_bytes_not_values(solution):
    shapes = [(4,), (4,), (4,), (4,)]
    for dtype, cap in ((np.float16, 16), (np.float64, 16), (np.float16, 24), (np.float64, 40)):
        grads = _model(shapes, dtype)
        what = f"four gradients of 4 {np.dtype(dtype).name} values, cap {cap} bytes"
        _same(solution.pack_buckets(grads, cap), reference.pack_buckets(grads, cap), what)


def test_matrices_and_scalars_are_flattened_row_major(solution):
    grads = _model([(2, 3), (), (2, 1, 2), (1, 1)])
    _same(solution.pack_buckets(grads, 10**6), _expect([[12, 8, 9, 10, 11, 7, 1, 2, 3, 4, 5, 6]]), "a 1x1 matrix, a 2x1x2 array, a 0-d array and a 2x3 matrix")
    for cap in (4, 8, 20, 24):
        _same(solution.pack_buckets(grads, cap), reference.pack_buckets(grads, cap), f"the same gradients, cap {cap} bytes")


def test_an_empty_model_gives_no_buckets(solution):
    for cap in (1, 4096):
        got = solution.pack_buckets([], cap)
        assert got == [], f"no gradients, cap {cap}: returned {got!r}, want []"


def test_bad_input_raises(solution):
    good = _model([(2,), (3,)])
    cases = [
        ("a cap of 0", good, 0),
        ("a negative cap", good, -8),
        ("a cap of True", good, True),
        ("a cap of 8.0", good, 8.0),
        ("a cap of '8'", good, "8"),
        ("a cap of None", good, None),
        ("a cap of 0 with no gradients", [], 0),
        ("a cap of True with no gradients", [], True),
        ("float32 then float64", [good[0], good[1].astype(np.float64)], 64),
        ("float16 then float32", [good[0].astype(np.float16), good[1]], 64),
        ("float64 then float32", [good[0].astype(np.float64), good[1]], 64),
        ("float32 then float16", [good[0], good[1].astype(np.float16)], 64),
        ("int32 gradients", [g.astype(np.int32) for g in good], 64),
        ("int64 gradients", [g.astype(np.int64) for g in good], 64),
        ("bool gradients", [g.astype(bool) for g in good], 64),
        ("complex64 gradients", [g.astype(np.complex64) for g in good], 64),
        ("a gradient of shape (0,) in the middle", [good[0], np.zeros(0, np.float32), good[1]], 64),
        ("a gradient of shape (3, 0) last", [good[0], np.zeros((3, 0), np.float32)], 1),
        ("a gradient of shape (0,) alone", [np.zeros(0, np.float32)], 1),
    ]
    for what, grads, cap in cases:
        try:
            solution.pack_buckets(grads, cap)
        except ValueError:
            continue
        raise AssertionError(f"{what}: no ValueError raised")


def test_generated_models_match_the_reference(solution):
    rng = random.Random(job_seed())
    nprng = np.random.default_rng(job_seed())
    for _ in range(40):
        dtype = rng.choice([np.float16, np.float32, np.float64])
        shapes = [tuple(rng.randint(1, 4) for _ in range(rng.randint(0, 3))) for _ in range(rng.randint(0, 12))]
        grads = [nprng.standard_normal(shape).astype(dtype) for shape in shapes]
        total = sum(grad.nbytes for grad in grads)
        cap = rng.randint(1, total + 16)
        _same(solution.pack_buckets(grads, cap), reference.pack_buckets(grads, cap), f"{len(grads)} {np.dtype(dtype).name} gradients of {total} bytes, cap {cap} bytes")
