"""Correct, written from the instructions alone: quantizes one row at a
time in a Python loop, rounds up with divmod, and checks the arguments in
another order than the rules list them."""

from __future__ import annotations

import torch


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _ceil_div(a: int, b: int) -> int:
    quotient, remainder = divmod(a, b)
    return quotient + (1 if remainder else 0)


def weight_bytes(n_params: int, bits: int, group_size: int | None = None, scale_bits: int = 16) -> int:
    if group_size is not None:
        if not _is_int(group_size) or group_size <= 0:
            raise ValueError("group_size must be a positive int")
        if not _is_int(scale_bits) or scale_bits <= 0:
            raise ValueError("scale_bits must be a positive int")
    if not _is_int(bits) or bits <= 0:
        raise ValueError("bits must be a positive int")
    if not _is_int(n_params) or n_params < 0:
        raise ValueError("n_params must be a non-negative int")
    scales = 0 if group_size is None else _ceil_div(n_params, group_size)
    total_bits = n_params * bits + (scales * scale_bits if scales else 0)
    return _ceil_div(total_bits, 8)


def quantize_int8(x: torch.Tensor, scale: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    if x.dim() != 2 or 0 in x.shape:
        raise ValueError("x must be a non-empty 2-D tensor")
    rows = x.shape[0]
    xf = x.to(torch.float32)
    if scale is not None:
        given = scale.to(torch.float32)
        if given.shape != (rows,):
            raise ValueError("scale must have one entry per row")
        for value in given.tolist():
            if not (0.0 < value < float("inf")):
                raise ValueError("scale entries must be positive and finite")
        scales = given
    else:
        scales = torch.empty(rows, dtype=torch.float32)
        for i in range(rows):
            peak = xf[i].abs().max()
            scales[i] = 1.0 if peak.item() == 0.0 else peak / 127
    q = torch.empty(x.shape, dtype=torch.int8)
    for i in range(rows):
        q[i] = (xf[i] / scales[i]).round().clamp(-127, 127).to(torch.int8)
    return q, scales


def dequantize_int8(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    s = scale.to(torch.float32)
    out = torch.empty(q.shape, dtype=torch.float32)
    for i in range(q.shape[0]):
        out[i] = q[i].to(torch.float32) * s[i]
    return out


def kv_cache_saving(fp16_bytes: int, dtype: str) -> int:
    divisors = {"fp16": 1, "bf16": 1, "fp8": 2, "int8": 2, "int4": 4}
    if not isinstance(dtype, str) or dtype not in divisors:
        raise ValueError("unknown dtype")
    if not _is_int(fp16_bytes) or fp16_bytes < 0:
        raise ValueError("fp16_bytes must be a non-negative int")
    return fp16_bytes - _ceil_div(fp16_bytes, divisors[dtype])
