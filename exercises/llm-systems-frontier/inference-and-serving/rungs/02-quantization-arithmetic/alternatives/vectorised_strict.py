"""Correct, written from the instructions alone: whole-tensor operations,
ceilings as negated floor division, and extra validation the rules leave
open (x must be a floating-point tensor; a given scale must be a tensor)."""

from __future__ import annotations

import torch

FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
QUARTERS_KEPT = {"fp16": 4, "bf16": 4, "fp8": 2, "int8": 2, "int4": 1}


def _int(value: object) -> int:
    if type(value) is not int:
        raise ValueError(f"expected an int, got {value!r}")
    return value


def weight_bytes(n_params: int, bits: int, group_size: int | None = None, scale_bits: int = 16) -> int:
    if _int(n_params) < 0 or _int(bits) <= 0:
        raise ValueError("n_params must be >= 0 and bits > 0")
    total = n_params * bits
    if group_size is not None:
        if _int(group_size) <= 0 or _int(scale_bits) <= 0:
            raise ValueError("group_size and scale_bits must be > 0")
        total += -(-n_params // group_size) * scale_bits
    return -(-total // 8)


def quantize_int8(x: torch.Tensor, scale: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    if not isinstance(x, torch.Tensor) or x.dtype not in FLOATS:
        raise ValueError("x must be a floating-point tensor")
    if x.dim() != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError("x must be 2-D with at least one row and one column")
    xf = x.to(torch.float32)
    rows = xf.shape[0]
    if scale is None:
        amax = xf.abs().amax(dim=1)
        scale = torch.where(amax == 0, torch.ones_like(amax), amax / 127)
    else:
        if not isinstance(scale, torch.Tensor):
            raise ValueError("scale must be a tensor")
        scale = scale.to(torch.float32)
        if tuple(scale.shape) != (rows,) or not bool(torch.all(torch.isfinite(scale) & (scale > 0))):
            raise ValueError("scale must be (rows,) with positive finite entries")
    q = torch.clamp(torch.round(xf / scale.unsqueeze(1)), -127, 127).to(torch.int8)
    return q, scale


def dequantize_int8(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return q.to(torch.float32) * scale.to(torch.float32).unsqueeze(1)


def kv_cache_saving(fp16_bytes: int, dtype: str) -> int:
    if type(dtype) is not str or dtype not in QUARTERS_KEPT:
        raise ValueError(f"unknown dtype {dtype!r}")
    if _int(fp16_bytes) < 0:
        raise ValueError("fp16_bytes must be >= 0")
    kept = -(-fp16_bytes * QUARTERS_KEPT[dtype] // 4)
    return fp16_bytes - kept
