"""Hidden tests: rounding, bad input, clamping, zero rows and the error bound."""

import random

import pytest
import reference
import torch
from grading import assert_arguments_unchanged, assert_bytes, assert_close, assert_tensor, job_seed


def _symmetric_reference(x, scale):
    """Expected q, and a mask of values within 1e-3 of a rounding tie (either side is accepted there)."""
    y = x / scale[:, None]
    near_tie = ((y - y.floor()) - 0.5).abs() < 1e-3
    return torch.clamp(torch.round(y), -127, 127).to(torch.int8), near_tie


def _check_q(q, expected, near_tie, what):
    assert_tensor(q, shape=tuple(expected.shape), dtype=torch.int8, what=what)
    diff = (q.to(torch.int16) - expected.to(torch.int16)).abs()
    far = ~near_tie
    assert_close(q[far], expected[far], what=f"{what} (values away from a .5 tie, exact)")
    assert int(diff.max()) <= 1, f"{what}: off by {int(diff.max())} levels at a .5 tie"


def test_partial_last_group_still_needs_a_scale(solution):
    # 1000 weights in groups of 128: 8 groups (the last holds 104 weights)
    assert_bytes(solution.weight_bytes(1000, 4, group_size=128), 516, "1000 int4 weights, groups of 128, fp16 scales")
    # 130 weights in groups of 64: 3 groups
    assert_bytes(solution.weight_bytes(130, 8, 64), 136, "130 int8 weights, groups of 64, fp16 scales")


def test_fractional_bytes_round_up(solution):
    assert_bytes(solution.weight_bytes(3, 4), 2, "3 int4 weights (12 bits)")
    assert_bytes(solution.weight_bytes(1001, 3), 376, "1001 3-bit weights (3003 bits)")
    assert_bytes(solution.weight_bytes(0, 4, group_size=128), 0, "zero weights")
    assert_bytes(solution.weight_bytes(5, 4, group_size=2, scale_bits=4), 4, "5 int4 weights, 3 groups, 4-bit scales (32 bits)")


def test_scale_width_and_group_size_are_parameters(solution):
    assert_bytes(
        solution.weight_bytes(13_000_000_000, 4, group_size=64, scale_bits=32),
        7_312_500_000,
        "13B int4 weights, one fp32 scale per 64 weights (4.5 bits each)",
    )
    assert_bytes(
        solution.weight_bytes(70_000_000_000, 8, group_size=32),
        74_375_000_000,
        "70B int8 weights, one fp16 scale per 32 weights (8.5 bits each)",
    )
    assert_bytes(
        solution.weight_bytes(70_000_000_000, 8, scale_bits=32),
        70_000_000_000,
        "70B int8 weights without groups (scale_bits must then be ignored)",
    )


def test_invalid_weight_arguments_raise(solution):
    bad_calls = [
        ((1000, 0), {}),
        ((1000, -4), {}),
        ((-1, 8), {}),
        ((1000, 4), {"group_size": 0}),
        ((1000, 4), {"group_size": -128}),
    ]
    for args, kwargs in bad_calls:
        with pytest.raises(ValueError):
            solution.weight_bytes(*args, **kwargs)


def test_quantize_random_matrix_row_by_row(solution):
    gen = torch.Generator().manual_seed(20240611)
    x = torch.randn(6, 33, generator=gen) * torch.tensor([0.01, 1.0, 5.0, 30.0, 0.5, 2.0])[:, None]
    q, scale = solution.quantize_int8(x)
    expected_scale = x.abs().amax(dim=1) / 127
    assert_close(scale, expected_scale, what="per-row scales of a 6x33 matrix (float32)")
    expected_q, near_tie = _symmetric_reference(x, expected_scale)
    _check_q(q, expected_q, near_tie, "q of a 6x33 matrix")


def test_all_zero_row_has_no_nan(solution):
    x = torch.tensor([[1.5, -0.75, 0.25], [0.0, 0.0, 0.0], [-0.2, 0.1, 0.0]])
    q, scale = solution.quantize_int8(x)
    assert_close(scale, torch.tensor([1.5 / 127, 1.0, 0.2 / 127]), what="scales with an all-zero middle row")
    assert_close(q[1], torch.zeros(3, dtype=torch.int8), what="q of the all-zero row")
    x_hat = solution.dequantize_int8(q, scale)
    assert not bool(torch.isnan(x_hat).any()), "dequantized tensor contains NaN"
    assert_close(x_hat[1], torch.zeros(3), what="dequantized all-zero row")


def test_explicit_scale_clamps_outliers(solution):
    x = torch.tensor([[3.0, -3.0, 0.5, -0.5, 1.27, -1.28], [10.0, -0.31, 0.0, 0.2, -9.9, 0.05]])
    scale = torch.tensor([0.01, 0.04])
    q, scale_out = solution.quantize_int8(x, scale)
    assert_close(
        q,
        torch.tensor([[127, -127, 50, -50, 127, -127], [127, -8, 0, 5, -127, 1]], dtype=torch.int8),
        what="q with a given scale and values outside its range",
    )
    assert_close(scale_out, scale, what="returned scale when one is given")


def test_round_trip_error_is_at_most_half_a_scale(solution):
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(16, 64, generator=gen)
    x[3, 5] = 40.0  # an outlier stretches row 3's scale
    q, scale = solution.quantize_int8(x)
    x_hat = solution.dequantize_int8(q, scale)
    assert_tensor(x_hat, shape=(16, 64), dtype=torch.float32, what="dequantized tensor")
    ratio = ((x_hat - x).abs() / x.abs().amax(dim=1, keepdim=True) * 127).max().item()
    assert ratio <= 0.5 + 1e-4, f"round-trip error reaches {ratio:.3f} x scale; rounding to nearest keeps it <= 0.5 x scale"


def test_dequantize_uses_each_rows_scale(solution):
    q = torch.tensor([[127, -1, 0], [-127, 64, 3]], dtype=torch.int8)
    scale = torch.tensor([0.5, 0.001])
    expected = torch.tensor([[63.5, -0.5, 0.0], [-0.127, 0.064, 0.003]])
    assert_close(solution.dequantize_int8(q, scale), expected, what="dequantized 2x3 tensor (float32)")


def test_cache_saving_for_each_dtype(solution):
    fp16 = 3 * 1024**3
    expected = {"fp16": 0, "bf16": 0, "fp8": fp16 // 2, "int8": fp16 // 2, "int4": fp16 * 3 // 4}
    for dtype, saving in expected.items():
        assert_bytes(solution.kv_cache_saving(fp16, dtype), saving, f"saving of a 3 GiB fp16 cache stored in {dtype}")
    # 1,073,741,826 fp16 bytes in int4 take 268,435,456.5 bytes, rounded up to 268,435,457
    assert_bytes(solution.kv_cache_saving(1_073_741_826, "int4"), 805_306_369, "int4 saving when the size is not a multiple of 4")


def test_cache_saving_rejects_other_dtypes(solution):
    for dtype in ("fp32", "int2", "FP8", "", None, 8, ["int8"], ("int4",)):
        with pytest.raises(ValueError):
            solution.kv_cache_saving(1024, dtype)
    with pytest.raises(ValueError):
        solution.kv_cache_saving(-1024, "int8")


def test_scale_width_is_checked_only_with_groups(solution):
    with pytest.raises(ValueError):
        solution.weight_bytes(1000, 4, group_size=128, scale_bits=0)
    with pytest.raises(ValueError):
        solution.weight_bytes(1000, 4, 128, -16)
    assert_bytes(solution.weight_bytes(1000, 4, scale_bits=0), 500, "1000 int4 weights, no groups, scale_bits=0 (ignored)")
    assert_bytes(solution.weight_bytes(1000, 4, None, -8), 500, "1000 int4 weights, group_size=None, scale_bits=-8 (ignored)")


def test_numbers_of_another_type_raise(solution):
    bad_calls = [
        ((1000.0, 4), {}),
        ((1000, 4.0), {}),
        ((1000, 4), {"group_size": 128.0}),
        ((1000, 4), {"group_size": 128, "scale_bits": 16.0}),
        ((True, 8), {}),
        ((1000, True), {}),
        (("1000", 8), {}),
    ]
    for args, kwargs in bad_calls:
        with pytest.raises(ValueError):
            solution.weight_bytes(*args, **kwargs)
    for size in (1024.0, True, "1024", 1.5):
        with pytest.raises(ValueError):
            solution.kv_cache_saving(size, "int8")


def test_byte_counts_are_python_ints(solution):
    for args in ((1001, 3), (1000, 4, 128), (7_000_000_000, 4, 128, 16)):
        got = solution.weight_bytes(*args)
        assert type(got) is int, f"weight_bytes{args} returned {type(got).__name__} {got!r}; the rules ask for an int"
    for dtype in ("int4", "int8", "fp16"):
        got = solution.kv_cache_saving(1_073_741_826, dtype)
        assert type(got) is int, f"kv_cache_saving(1073741826, {dtype!r}) returned {type(got).__name__} {got!r}; the rules ask for an int"


def test_exact_halves_round_to_even(solution):
    # 127 in the row makes the scale exactly 1.0, so x / scale lands exactly on halves.
    x = torch.tensor([[127.0, 2.5, -0.5, 1.5, -3.5, 0.5, 126.5, -2.5, 4.5]])
    q, scale = solution.quantize_int8(x)
    assert_close(scale, torch.tensor([1.0]), what="scale of a row whose largest magnitude is 127")
    assert_close(q, torch.tensor([[127, 2, 0, 2, -4, 0, 126, -2, 4]], dtype=torch.int8), what="q of values exactly halfway between two levels")
    q, _ = solution.quantize_int8(torch.tensor([[1.25, 0.75, -0.25, -1.75]]), torch.tensor([0.5]))
    assert_close(q, torch.tensor([[2, 2, 0, -4]], dtype=torch.int8), what="q of exact halves with a given scale of 0.5")


def test_half_precision_and_double_inputs_are_quantized_in_float32(solution):
    gen = torch.Generator().manual_seed(2026)
    base = torch.randn(5, 24, generator=gen) * torch.tensor([0.02, 1.0, 7.0, 300.0, 0.3])[:, None]
    for dtype in (torch.float16, torch.bfloat16, torch.float64):
        x = base.to(dtype)
        q, scale = solution.quantize_int8(x)
        x32 = x.to(torch.float32)
        expected_scale = x32.abs().amax(dim=1) / 127
        assert_close(scale, expected_scale, what=f"per-row scales of a {dtype} input (float32, computed after converting)")
        expected_q, near_tie = _symmetric_reference(x32, expected_scale)
        _check_q(q, expected_q, near_tie, f"q of a {dtype} input")


def test_exact_ties_after_dividing_by_the_scale(solution):
    # In each row the second value divided by the row's scale (x / scale, in
    # float32) is exactly k + 0.5, so ties-to-even decides; multiplied by
    # 1 / scale instead it lands a hair off the tie, on the other level.
    x = torch.tensor([
        [1.678059458732605, 1.618600606918335],
        [8.668719291687012, 4.129586696624756],
        [5.892233848571777, 3.456468105316162],
        [2.4006261825561523, 0.8222616910934448],
    ])
    expected_q, expected_scale = reference.quantize_int8(x)
    q, scale = solution.quantize_int8(x)
    assert_close(scale, expected_scale, what="per-row scales")
    _check_q(q, expected_q, torch.zeros_like(x, dtype=torch.bool), "q where x / scale is exactly k + 0.5 (ties go to the even level)")


def test_double_input_is_rounded_after_converting_to_float32(solution):
    # 2.5000001 is not a tie in float64, but converted to float32 it is exactly 2.5: ties-to-even gives 2.
    x = torch.tensor([[127.0, 2.5000001], [-127.0, -6.5000001]], dtype=torch.float64)
    q, scale = solution.quantize_int8(x)
    assert_tensor(scale, shape=(2,), dtype=torch.float32, what="scales of a float64 input")
    _check_q(q, torch.tensor([[127, 2], [-127, -6]], dtype=torch.int8), torch.zeros(2, 2, dtype=torch.bool), "q of a float64 input")


def test_byte_counts_beyond_float_precision(solution):
    # Past 2**53 a float cannot hold every whole number: the rounding up must happen in integers.
    for args in ((2**53 + 1, 1), (2**53 + 1, 4), (10**18 + 3, 4, 128), (10**18 + 1, 8, 64, 32)):
        assert_bytes(solution.weight_bytes(*args), reference.weight_bytes(*args), f"weight_bytes{args}")
    for size, dtype in ((2**53 + 1, "int8"), (2**53 + 1, "int4"), (2**53 + 3, "fp8"), (10**18 + 1, "int4")):
        assert_bytes(solution.kv_cache_saving(size, dtype), reference.kv_cache_saving(size, dtype), f"kv_cache_saving({size}, {dtype!r})")


def test_shapes_without_rows_or_columns_raise(solution):
    for shape in ((0, 4), (3, 0), (5,), (2, 2, 2)):
        with pytest.raises(ValueError):
            solution.quantize_int8(torch.ones(shape))


def test_bad_given_scale_raises(solution):
    x = torch.tensor([[1.0, -2.0], [0.5, 0.25], [3.0, 0.0]])
    bad_scales = [
        torch.tensor([0.1, 0.1]),
        torch.tensor([0.1, 0.1, 0.1, 0.1]),
        torch.tensor([[0.1], [0.1], [0.1]]),
        torch.tensor([0.1, 0.0, 0.1]),
        torch.tensor([0.1, -0.1, 0.1]),
        torch.tensor([0.1, float("inf"), 0.1]),
        torch.tensor([0.1, float("nan"), 0.1]),
        # Positive and finite in float64, but 0 and inf once converted to float32.
        torch.tensor([0.1, 1e-50, 0.1], dtype=torch.float64),
        torch.tensor([0.1, 1e300, 0.1], dtype=torch.float64),
    ]
    for scale in bad_scales:
        with pytest.raises(ValueError):
            solution.quantize_int8(x, scale)


def test_given_double_scale_comes_back_as_float32(solution):
    x = torch.tensor([[1.0, -2.0, 0.3], [0.5, 0.26, -0.06]])
    scale = torch.tensor([0.02, 0.004], dtype=torch.float64)
    q, scale_out = solution.quantize_int8(x, scale)
    assert_close(scale_out, scale.to(torch.float32), what="returned scale when a float64 one is given")
    assert_close(q, torch.tensor([[50, -100, 15], [125, 65, -15]], dtype=torch.int8), what="q with a given float64 scale")


def test_given_double_scale_is_converted_before_dividing(solution):
    # Each x / scale is exactly k + 0.5 in float32 (ties to even), but a hair below it in float64.
    x = torch.tensor([[0.35, -0.35, 0.05, 0.0], [0.025, 0.175, -0.025, 1.0], [1.05, 0.15, -1.05, 0.0]])
    scale = torch.tensor([0.1, 0.05, 0.7], dtype=torch.float64)
    expected_q, expected_scale = reference.quantize_int8(x, scale)
    q, scale_out = solution.quantize_int8(x, scale)
    assert_close(scale_out, expected_scale, what="returned scale when a float64 one is given")
    _check_q(q, expected_q, torch.zeros_like(x, dtype=torch.bool), "q with a given float64 scale (converted to float32 before dividing; ties go to the even level)")


def test_tiny_rows_are_not_zero_rows(solution):
    # Only a row of zeros gets the scale 1.0; a row of tiny values gets its own tiny scale.
    x = torch.tensor([[1e-20, -3e-21, 0.0], [1e-37, -4e-38, 2e-38], [0.0, 0.0, 0.0]])
    expected_q, expected_scale = reference.quantize_int8(x)
    q, scale = solution.quantize_int8(x)
    assert_close(scale, expected_scale, rtol=1e-6, atol=0.0, what="scales of rows whose largest value is 1e-20 and 1e-37, and of a zero row")
    _check_q(q, expected_q, torch.zeros_like(x, dtype=torch.bool), "q of rows of tiny values")
    # In float64 1e-300 is not zero, but converted to float32 it is: that row is a zero row.
    q, scale = solution.quantize_int8(torch.tensor([[1e-300, -1e-300], [1.0, 0.5]], dtype=torch.float64))
    assert_close(scale, torch.tensor([1.0, 1.0 / 127]), what="scales of a float64 row of 1e-300 (zero in float32) and of an ordinary row")


def test_inputs_are_left_unchanged(solution):
    x = torch.tensor([[0.5, -1.27, 0.0, 0.3], [2.54, 1.0, -0.064, 0.0]])
    kept = x.clone()
    solution.quantize_int8(x)
    assert_arguments_unchanged(solution, "quantize_int8(x)")
    assert torch.equal(x, kept), "quantize_int8 changed the caller's x; it must work on a copy"
    scale = torch.tensor([0.01, 0.05])
    kept_scale = scale.clone()
    solution.quantize_int8(x, scale)
    assert_arguments_unchanged(solution, "quantize_int8(x, scale)")
    assert torch.equal(x, kept) and torch.equal(scale, kept_scale), "quantize_int8 changed the caller's x or scale"
    q = torch.tensor([[127, -3], [1, 0]], dtype=torch.int8)
    solution.dequantize_int8(q, torch.tensor([0.5, 0.25]))
    assert_arguments_unchanged(solution, "dequantize_int8(q, scale)")


def test_dequantize_converts_a_half_precision_scale_first(solution):
    q = torch.tensor([[127, -127, 99, 7], [101, 3, -77, 0]], dtype=torch.int8)
    for dtype in (torch.bfloat16, torch.float16):
        scale = torch.tensor([0.0117, 0.3], dtype=dtype)
        expected = q.to(torch.float32) * scale.to(torch.float32)[:, None]
        assert_close(solution.dequantize_int8(q, scale), expected, what=f"dequantized with a {dtype} scale (both converted to float32, then multiplied)")


def test_single_row_and_single_column(solution):
    q, scale = solution.quantize_int8(torch.tensor([[-0.3]]))
    assert_close(q, torch.tensor([[-127]], dtype=torch.int8), what="q of a 1x1 matrix")
    assert_close(scale, torch.tensor([0.3 / 127]), what="scale of a 1x1 matrix")
    column = torch.tensor([[2.0], [-0.001], [0.0], [5e4]])
    q, scale = solution.quantize_int8(column)
    assert_close(q, torch.tensor([[127], [-127], [0], [127]], dtype=torch.int8), what="q of a 4x1 column (each row has one value)")
    assert_close(scale, column.abs().reshape(-1).where(column.reshape(-1) != 0, torch.tensor(127.0)) / 127, what="scales of a 4x1 column")


def test_dequantize_returns_float32_for_a_double_scale(solution):
    q = torch.tensor([[127, -3], [1, 0]], dtype=torch.int8)
    got = solution.dequantize_int8(q, torch.tensor([0.5, 0.25], dtype=torch.float64))
    assert_close(got, torch.tensor([[63.5, -1.5], [0.25, 0.0]]), what="dequantized with a float64 scale (float32 result)")


def test_small_cache_sizes_round_the_quantized_size_up(solution):
    for fp16 in range(10):
        for dtype, (num, den) in {"int8": (1, 2), "fp8": (1, 2), "int4": (1, 4), "bf16": (1, 1)}.items():
            expected = fp16 - -(-fp16 * num // den)
            assert_bytes(solution.kv_cache_saving(fp16, dtype), expected, f"saving of a {fp16}-byte fp16 cache stored in {dtype}")


# ---------------------------------------------------------------------------
# Differential tests: compare with the reference on generated input.
# ---------------------------------------------------------------------------

BAD_NUMBERS = [0, -1, -128, 4.0, 2.5, True, "8", None]


def _outcome(fn, *args, **kwargs):
    try:
        return ("value", fn(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - any exception is an outcome to compare
        return ("raises", type(exc).__name__)


def _same_int(got, expected):
    if expected[0] == "raises":
        return got == expected
    return got[0] == "value" and type(got[1]) is int and got[1] == expected[1]


def test_generated_weight_bytes_match_the_reference(solution):
    rng = random.Random(job_seed())
    mismatches = []
    for case in range(250):
        group = rng.choice([None, None, 1, 2, 3, 32, 64, 100, 128, 256, 1000])
        n = rng.choice([0, 1, 2, 3, 7, 127, 128, 129, 1000, 4097, 7_000_000_000, 70_553_706_496, 10**12 + 1])
        if group and rng.random() < 0.5:
            n = group * rng.randrange(1, 10**6) + rng.choice([-1, 0, 1])
        bits = rng.choice([1, 2, 3, 4, 4, 5, 6, 8, 8, 16, 32])
        scale_bits = rng.choice([8, 16, 16, 32, 1])
        if case % 4 == 3:
            which = rng.randrange(4)
            if which == 0:
                n = rng.choice([-1, -1000, 1000.0, True, "1000", None])
            elif which == 1:
                bits = rng.choice(BAD_NUMBERS)
            elif which == 2:
                group = rng.choice(BAD_NUMBERS[:-1])
            else:
                scale_bits = rng.choice(BAD_NUMBERS)
        expected = _outcome(reference.weight_bytes, n, bits, group, scale_bits)
        got = _outcome(solution.weight_bytes, n, bits, group_size=group, scale_bits=scale_bits)
        if not _same_int(got, expected):
            mismatches.append(f"weight_bytes({n!r}, {bits!r}, group_size={group!r}, scale_bits={scale_bits!r}): got {got}, expected {expected}")
    assert not mismatches, f"{len(mismatches)} of 250 generated cases differ from the rules; first: {mismatches[0]}"


def test_generated_cache_savings_match_the_reference(solution):
    rng = random.Random(job_seed() + 1)
    mismatches = []
    for case in range(200):
        size = rng.choice([0, 1, 2, 3, 5, 6, 7, 1023, 2**30, 2**30 + 2, 3 * 2**40 + 1, rng.randrange(10**13)])
        dtype = rng.choice(["fp16", "bf16", "fp8", "int8", "int4"])
        if case % 4 == 3:
            if rng.random() < 0.5:
                size = rng.choice([-1, -(2**30), 1024.0, 2.5, True, "1024", None])
            else:
                dtype = rng.choice(["fp32", "FP8", "Int4", "int2", "", "float16", " int8", None, ["int8"]])
        expected = _outcome(reference.kv_cache_saving, size, dtype)
        got = _outcome(solution.kv_cache_saving, size, dtype)
        if not _same_int(got, expected):
            mismatches.append(f"kv_cache_saving({size!r}, {dtype!r}): got {got}, expected {expected}")
    assert not mismatches, f"{len(mismatches)} of 200 generated cases differ from the rules; first: {mismatches[0]}"


def _random_matrix(rng, gen):
    rows, cols = rng.choice([1, 1, 2, 3, 5, 8]), rng.choice([1, 2, 3, 16, 33, 70])
    magnitude = torch.tensor([10 ** rng.uniform(-4, 4) for _ in range(rows)])
    x = torch.randn(rows, cols, generator=gen) * magnitude[:, None]
    for row in range(rows):
        kind = rng.random()
        if kind < 0.12:
            x[row] = 0.0  # an all-zero row
        elif kind < 0.25:
            x[row] = torch.randint(-254, 255, (cols,), generator=gen).float() / 2  # many exact halves
            x[row, rng.randrange(cols)] = rng.choice([127.0, -127.0])  # scale exactly 1.0
    dtype = rng.choice([torch.float32, torch.float32, torch.float64, torch.float16, torch.bfloat16])
    if dtype is torch.float16:
        x = x.clamp(-6e4, 6e4)
    return x.to(dtype)


def test_generated_matrices_quantize_like_the_reference(solution):
    rng = random.Random(job_seed() + 2)
    gen = torch.Generator().manual_seed(job_seed())
    for case in range(60):
        x = _random_matrix(rng, gen)
        given = None
        if case % 3 == 2:
            # A calibrated scale, sometimes much smaller than the row needs (values get clamped).
            given = (x.float().abs().amax(dim=1).clamp(min=1e-3) / 127 * torch.tensor([rng.choice([0.05, 0.5, 1.0, 3.0]) for _ in range(x.shape[0])]))
            given = given.to(rng.choice([torch.float32, torch.float64]))
        label = f"case {case}: {x.dtype} {tuple(x.shape)} matrix, {'given' if given is not None else 'computed'} scale"
        exp_q, exp_scale = reference.quantize_int8(x, given)
        q, scale = solution.quantize_int8(x, given)
        assert_close(scale, exp_scale, what=f"{label}: scales")
        # Only exact ties decide between two levels; away from them q is exact.
        y = x.to(torch.float32) / exp_scale[:, None]
        near_tie = ((y - y.floor()) - 0.5).abs() < 1e-3
        exact_half = (y - y.floor()) == 0.5
        _check_q(q, exp_q, near_tie & ~exact_half, f"{label}: q")
        scale_in = exp_scale.to(rng.choice([torch.float32, torch.float32, torch.float64, torch.float16, torch.bfloat16]))
        assert_close(solution.dequantize_int8(exp_q, scale_in), reference.dequantize_int8(exp_q, scale_in), what=f"{label}: dequantized with a {scale_in.dtype} scale")
    bad = [torch.zeros(0, 3), torch.zeros(2, 0), torch.ones(4), torch.ones(1, 2, 3)]
    for x in bad:
        with pytest.raises(ValueError):
            solution.quantize_int8(x)


def test_generated_scale_mistakes_raise(solution):
    rng = random.Random(job_seed() + 3)
    gen = torch.Generator().manual_seed(job_seed() + 3)
    for _ in range(20):
        x = _random_matrix(rng, gen)
        rows = x.shape[0]
        scale = torch.rand(rows, generator=gen) + 0.01
        kind = rng.randrange(4)
        if kind == 0:
            scale = torch.rand(rows + rng.choice([1, 2]), generator=gen) + 0.01
        elif kind == 1:
            scale = scale[:, None]
        else:
            scale[rng.randrange(rows)] = rng.choice([0.0, -0.5, float("inf"), float("nan")])
        with pytest.raises(ValueError):
            solution.quantize_int8(x, scale)
