"""Hidden tests: formats, margins, histories, bad input, and generated tensor sequences against the reference."""

import math
import random

import pytest
import reference
import torch
from grading import assert_arguments_unchanged, assert_close, assert_equal, assert_int, assert_tensor, by_reference, job_seed


def _same_step(got_scaler, ref_scaler, x, label):
    expected = ref_scaler.quantize(x.clone())
    got = got_scaler.quantize(x.clone())
    assert_tensor(got, shape=tuple(x.shape), dtype=torch.float32, what=f"{label}: result")
    assert_close(got, expected, rtol=1.3e-6, atol=1e-5, what=f"{label}: result")
    assert_int(got_scaler.last_saturated, ref_scaler.last_saturated, f"{label}: last_saturated")
    assert_close(got_scaler.amax_history, ref_scaler.amax_history, rtol=0.0, atol=0.0, what=f"{label}: amax_history")
    assert_close(got_scaler.scale, ref_scaler.scale, rtol=1e-12, atol=0.0, what=f"{label}: scale for the next tensor")


def test_e5m2_range_and_rounding(solution):
    scaler = solution.DelayedScaling("e5m2", history_len=2)
    x = torch.tensor([1.0, 3.0, 5.0, 9.0, -100.0, 0.1])
    # Scale 1: E5M2 has 2 mantissa bits: 9 lies halfway between 8 and 10 (ties go to the even 8), 100 rounds to 96.
    assert_close(scaler.quantize(x), torch.tensor([1.0, 3.0, 5.0, 8.0, -96.0, 0.09375]), what="E5M2 at scale 1")
    assert_close(scaler.scale, 57344.0 / 100.0, rtol=1e-12, atol=0.0, what="E5M2 scale after amax 100")


def test_e5m2_saturates_instead_of_overflowing(solution):
    scaler = solution.DelayedScaling("e5m2")
    got = scaler.quantize(torch.tensor([1e5, -7e4, 60000.0, 1.0]))
    assert bool(torch.isfinite(got).all()), f"E5M2 values past 57344 must saturate, got {got.tolist()}"
    assert_close(got, torch.tensor([57344.0, -57344.0, 57344.0, 1.0]), what="E5M2 values past the largest finite value")
    assert_int(scaler.last_saturated, 3, "saturated elements")


def test_e4m3_saturates_at_448(solution):
    scaler = solution.DelayedScaling("e4m3")
    got = scaler.quantize(torch.tensor([500.0, -1000.0, 448.0, 440.0]))
    assert_close(got, torch.tensor([448.0, -448.0, 448.0, 448.0]), what="E4M3 values at and past 448")
    assert_int(scaler.last_saturated, 2, "saturated elements (448 itself is not past the limit)")


def test_margin_halves_the_scale(solution):
    for margin in (0, 1, 3):
        scaler = solution.DelayedScaling("e4m3", history_len=4, margin=margin)
        scaler.quantize(torch.tensor([2.0, -4.0]))
        assert_close(scaler.scale, 448.0 / 4.0 / 2**margin, rtol=1e-12, atol=0.0, what=f"scale with margin {margin}")
    scaler = solution.DelayedScaling("e4m3", margin=2)
    assert_close(scaler.scale, 1.0, what="scale with margin 2 before any tensor (the margin applies only to a real amax)")


def test_history_rolls_over(solution):
    scaler = solution.DelayedScaling("e4m3", history_len=2)
    for value in (8.0, 2.0, 1.0):
        scaler.quantize(torch.tensor([value]))
    assert_close(scaler.amax_history, [2.0, 1.0], rtol=0.0, atol=0.0, what="history of length 2 after three tensors")
    assert_close(scaler.scale, 448.0 / 2.0, rtol=1e-12, atol=0.0, what="scale once the 8.0 has left the history")


def test_scale_uses_the_largest_amax_in_the_history(solution):
    scaler = solution.DelayedScaling("e4m3", history_len=4)
    for value in (1.0, 16.0, 2.0):
        scaler.quantize(torch.tensor([value, -value / 2]))
    assert_close(scaler.scale, 448.0 / 16.0, rtol=1e-12, atol=0.0, what="scale from a history of 1, 16, 2")


def test_history_is_a_copy(solution):
    scaler = solution.DelayedScaling()
    scaler.quantize(torch.tensor([3.0]))
    # The list itself, as a caller in the same process would hold it (not a copy made on the way back).
    history = by_reference(scaler, "amax_history")
    history.append(1000.0)
    history.insert(0, 0.5)
    assert_close(scaler.amax_history, [3.0], rtol=0.0, atol=0.0, what="history after the caller changed the list it got")
    assert_close(scaler.scale, 448.0 / 3.0, rtol=1e-12, atol=0.0, what="scale after the caller changed the list it got")


def test_all_zero_and_empty_tensors(solution):
    scaler = solution.DelayedScaling("e4m3", history_len=3)
    got = scaler.quantize(torch.zeros(2, 3))
    assert_close(got, torch.zeros(2, 3), what="an all-zero tensor")
    assert_close(scaler.scale, 1.0, what="scale after an all-zero tensor")
    got = scaler.quantize(torch.empty(0, 4))
    assert_tensor(got, shape=(0, 4), dtype=torch.float32, what="an empty tensor's result")
    assert_close(scaler.amax_history, [0.0, 0.0], rtol=0.0, atol=0.0, what="history after a zero and an empty tensor")
    assert_int(scaler.last_saturated, 0, "saturated elements of an empty tensor")
    scaler = solution.DelayedScaling("e4m3", history_len=3)
    scaler.quantize(torch.tensor([1.0]))
    scaler.quantize(torch.tensor([1000.0, 0.5]))  # scale 448: 1000 saturates, 0.5 does not
    assert_int(scaler.last_saturated, 1, "saturated elements of [1000, 0.5] at scale 448")
    scaler.quantize(torch.empty(3, 0))
    assert_int(scaler.last_saturated, 0, "saturated elements of an empty tensor after one that saturated")


def test_input_dtypes_are_computed_in_float32(solution):
    for dtype in (torch.float16, torch.bfloat16, torch.float64):
        x = torch.tensor([[0.3, -2.7], [11.0, 0.001]], dtype=dtype)
        ref, got = reference.DelayedScaling("e4m3"), solution.DelayedScaling("e4m3")
        for step in range(3):
            _same_step(got, ref, x * (step + 1), f"{dtype} input, step {step}")
    # Multiplied by the scale in bfloat16 or float16 first, these round twice and land on other FP8 levels.
    for dtype, fmt, values in (
        (torch.bfloat16, "e4m3", [16.125, 67.0, -43.0, 21.25, 33.0, -12.625, -1.7890625, -29.875]),
        (torch.bfloat16, "e5m2", [0.00030517578125, 0.08447265625, -1.78125, 0.77734375, 0.703125, -0.87109375, 1.9140625, -1.7109375]),
        (torch.float16, "e4m3", [0.14306640625, 0.609375, 1.3076171875, -1.515625, -1.431640625, 0.96435546875, -0.376220703125, 0.1285400390625]),
    ):
        x = torch.tensor(values, dtype=dtype)
        ref, got = reference.DelayedScaling(fmt), solution.DelayedScaling(fmt)
        _same_step(got, ref, x * 2, f"{dtype} input in {fmt}, first tensor")
        _same_step(got, ref, x, f"{dtype} input in {fmt}, scaled by the first tensor's amax")


def test_a_float64_amax_is_taken_after_converting(solution):
    # float32 rounds 16.96622610473844 up; the history holds the float32 value, and the next tensor's count of
    # saturated elements depends on which one set the scale.
    for fmt, value in (("e4m3", 16.96622610473844), ("e5m2", 3.1415926535897931), ("e4m3", 0.1)):
        ref, got = reference.DelayedScaling(fmt, history_len=4), solution.DelayedScaling(fmt, history_len=4)
        x = torch.tensor([value, -value / 3], dtype=torch.float64)
        _same_step(got, ref, x, f"float64 tensor with amax {value!r} in {fmt}")
        _same_step(got, ref, x.to(torch.float32), f"the same values as float32 in {fmt}, after the float64 tensor")


def test_keeps_the_shape(solution):
    scaler = solution.DelayedScaling("e5m2")
    x = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(3))
    got = scaler.quantize(x)
    assert_tensor(got, shape=(2, 3, 4), dtype=torch.float32, what="result of a 3-D tensor")
    got = scaler.quantize(torch.full((1, 1, 1, 1), 2.5, dtype=torch.bfloat16))
    assert_tensor(got, shape=(1, 1, 1, 1), dtype=torch.float32, what="result of a 4-D bfloat16 tensor of one element")


def test_input_is_not_changed(solution):
    # float32 input included: there .to(torch.float32) returns x itself, not a copy.
    for dtype in (torch.float32, torch.float16, torch.float64):
        x = torch.tensor([1.7, -300.0, 1000.0], dtype=dtype)
        before = x.clone()
        scaler = solution.DelayedScaling("e4m3")
        for step in range(2):  # the second call scales by 448 / 1000
            scaler.quantize(x)
            assert torch.equal(x, before), "quantize changed its input tensor"
            assert_arguments_unchanged(solution, f"quantize (a {dtype} tensor, call {step + 1})")


def test_saturation_is_counted_on_the_float32_product(solution):
    # The same tensor twice: the scale maps its amax to fp8_max, and whether
    # that product lands above fp8_max depends on float32 rounding.
    for fmt in ("e4m3", "e5m2"):
        for amax in (1303.189453125, 187.72824096679688, 865.539794921875):
            x = torch.tensor([1.0, amax])
            got, ref = solution.DelayedScaling(fmt), reference.DelayedScaling(fmt)
            for step in range(2):
                _same_step(got, ref, x, f"{fmt}, [1.0, {amax}] step {step + 1}")


def test_bad_constructor_arguments_raise(solution):
    for kwargs in (
        {"fmt": "E4M3"}, {"fmt": "fp8"}, {"fmt": "e4m3fn"}, {"fmt": None},
        {"history_len": 0}, {"history_len": -1}, {"history_len": 2.0}, {"history_len": True},
        {"margin": -1}, {"margin": 1.0}, {"margin": True}, {"margin": "1"},
    ):
        with pytest.raises(ValueError):
            solution.DelayedScaling(**kwargs)


def test_bad_tensors_raise_and_change_nothing(solution):
    scaler = solution.DelayedScaling("e4m3", history_len=4)
    scaler.quantize(torch.tensor([4.0, 500.0]))
    for bad in (
        torch.tensor([1.0, math.nan]),
        torch.tensor([math.inf, 1.0]),
        torch.tensor([-math.inf], dtype=torch.bfloat16),
        torch.tensor([1, 2, 3]),
        torch.tensor([True]),
        torch.tensor([1.0, 2.0]).to(torch.float8_e4m3fn),
        torch.tensor([1.0, 2.0]).to(torch.float8_e5m2),
        torch.tensor([1.0 + 2.0j]),
        torch.tensor([1e39, 1.0], dtype=torch.float64),  # finite in float64, infinite once converted to float32
        [1.0, 2.0],
        3.0,
    ):
        with pytest.raises(ValueError):
            scaler.quantize(bad)
    assert_close(scaler.amax_history, [500.0], rtol=0.0, atol=0.0, what="history after refused calls")
    assert_int(scaler.last_saturated, 1, "last_saturated after refused calls")


def test_two_scalers_are_independent(solution):
    a, b = solution.DelayedScaling(), solution.DelayedScaling()
    a.quantize(torch.tensor([10.0, 5000.0]))
    assert_close(b.amax_history, [], what="history of a second scaler")
    assert_close(b.scale, 1.0, what="scale of a second scaler")
    assert_int(b.last_saturated, 0, "last_saturated of a scaler that has quantized nothing yet")


def test_default_history_keeps_sixteen_values(solution):
    scaler = solution.DelayedScaling()
    for n in range(1, 17):
        scaler.quantize(torch.tensor([float(n)]))
    assert_close(scaler.amax_history, [float(n) for n in range(1, 17)], rtol=0.0, atol=0.0, what="default history after 16 tensors")
    scaler.quantize(torch.tensor([0.5]))
    assert_close(scaler.amax_history, [float(n) for n in range(2, 17)] + [0.5], rtol=0.0, atol=0.0, what="default history after 17 tensors")


def _tensor(rng, gen):
    shape = rng.choice([(1,), (7,), (4, 5), (2, 3, 8), (0,), (64,)])
    magnitude = rng.choice([1e-4, 0.02, 1.0, 3.0, 50.0, 900.0, 3e4])
    # Drawn in float64, so a float64 tensor holds values that float32 rounds (its amax too).
    x = torch.randn(shape, generator=gen, dtype=torch.float64) * magnitude
    if x.numel() and rng.random() < 0.3:
        x.view(-1)[rng.randrange(x.numel())] = rng.choice([10.0, 100.0, -1e3]) * magnitude  # an outlier
    if rng.random() < 0.1:
        x = torch.zeros(shape)
    x = x.clamp(-60000.0, 60000.0)  # finite in float16 too
    return x.to(rng.choice([torch.float32, torch.float32, torch.float16, torch.bfloat16, torch.float64]))


def test_generated_sequences_match_the_reference(solution):
    rng = random.Random(job_seed())
    gen = torch.Generator().manual_seed(job_seed())
    for case in range(25):
        fmt = rng.choice(["e4m3", "e5m2"])
        history_len = rng.choice([1, 2, 3, 16])
        margin = rng.choice([0, 0, 1, 2])
        ref, got = reference.DelayedScaling(fmt, history_len, margin), solution.DelayedScaling(fmt, history_len, margin)
        for step in range(rng.choice([1, 3, 6])):
            # Often the same tensor again, as in a steady training loop: its
            # amax then maps onto fp8_max itself, up to float32 rounding.
            if step and rng.random() < 0.4:
                x = x.clone()
            else:
                x = _tensor(rng, gen)
            _same_step(got, ref, x, f"sequence {case} ({fmt}, history_len={history_len}, margin={margin}), step {step}")
