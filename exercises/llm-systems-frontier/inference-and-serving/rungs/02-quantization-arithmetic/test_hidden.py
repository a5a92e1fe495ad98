"""Hidden tests: rounding, bad input, clamping, zero rows and the error bound."""

import pytest
import torch
from grading import assert_bytes, assert_close, assert_tensor


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
    for dtype in ("fp32", "int2", "FP8", ""):
        with pytest.raises(ValueError):
            solution.kv_cache_saving(1024, dtype)
    with pytest.raises(ValueError):
        solution.kv_cache_saving(-1024, "int8")
