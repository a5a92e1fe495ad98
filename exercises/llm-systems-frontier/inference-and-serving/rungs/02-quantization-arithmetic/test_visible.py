"""Visible tests: the worked examples from the instructions."""

import torch
from grading import GIB, assert_bytes, assert_close, assert_tensor


def test_seven_billion_weights_at_each_width(solution):
    n = 7_000_000_000
    assert_bytes(solution.weight_bytes(n, 16), 14_000_000_000, "7B weights in fp16")
    assert_bytes(solution.weight_bytes(n, 8), 7_000_000_000, "7B weights in int8")
    assert_bytes(solution.weight_bytes(n, 4), 3_500_000_000, "7B weights in int4, no scales")
    assert_bytes(
        solution.weight_bytes(n, 4, group_size=128),
        3_609_375_000,
        "7B weights in int4 with one fp16 scale per 128 weights",
    )


def test_worked_example_quantizes_each_row_on_its_own(solution):
    x = torch.tensor([[0.5, -1.27, 0.0, 0.3], [2.54, 1.0, -0.064, 0.0]])
    q, scale = solution.quantize_int8(x)
    assert_tensor(q, shape=(2, 4), dtype=torch.int8, what="q")
    assert_close(q, torch.tensor([[50, -127, 0, 30], [127, 50, -3, 0]], dtype=torch.int8), what="q")
    assert_close(scale, torch.tensor([0.01, 0.02]), what="per-row scales")
    x_hat = solution.dequantize_int8(q, scale)
    expected = torch.tensor([[0.5, -1.27, 0.0, 0.3], [2.54, 1.0, -0.06, 0.0]])
    assert_close(x_hat, expected, atol=1e-6, what="dequantized worked example")


def test_int8_cache_saves_half(solution):
    assert_bytes(solution.kv_cache_saving(GIB, "int8"), GIB // 2, "saving of a 1 GiB fp16 cache stored in int8")
