"""Visible tests: the worked example."""

import torch
from grading import assert_close, assert_int


def test_first_tensor_uses_scale_one(solution):
    scaler = solution.DelayedScaling("e4m3", history_len=3)
    assert_close(scaler.scale, 1.0, what="scale before any tensor")
    got = scaler.quantize(torch.tensor([0.5, -1.0, 2.0, 3.3]))
    assert_close(got, torch.tensor([0.5, -1.0, 2.0, 3.25]), what="first tensor, scale 1.0")
    assert_close(scaler.amax_history, [3.299999952316284], what="history after one tensor")


def test_outlier_saturates_until_the_history_sees_it(solution):
    scaler = solution.DelayedScaling("e4m3", history_len=3)
    x = torch.tensor([0.5, -1.0, 2.0, 3.3])
    scaler.quantize(x)
    got = scaler.quantize(x)
    assert_close(got, torch.tensor([64.0, -128.0, 256.0, 448.0]) / (448.0 / 3.299999952316284), what="second tensor, scale 448 / 3.3")
    got = scaler.quantize(torch.tensor([0.5, -1.0, 8.0, 3.0]))
    assert_close(got[2].item(), 3.3, rtol=1e-6, atol=0.0, what="the outlier 8.0 saturates to 448 / scale")
    assert_int(scaler.last_saturated, 1, "saturated elements of the third tensor")
    assert_close(scaler.scale, 56.0, what="scale after the outlier entered the history")
    got = scaler.quantize(torch.tensor([0.5, -1.0, 8.0, 3.0]))
    assert_close(got[2].item(), 8.0, what="the outlier once the history has seen it")
