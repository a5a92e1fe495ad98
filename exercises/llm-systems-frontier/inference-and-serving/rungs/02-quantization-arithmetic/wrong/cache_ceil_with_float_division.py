"""Quantization arithmetic."""

from __future__ import annotations

import math

import torch


def _int(value, name):
    if type(value) is not int:
        raise ValueError(f"{name} must be an int, got {value!r}")


def weight_bytes(n_params: int, bits: int, group_size: int | None = None, scale_bits: int = 16) -> int:
    _int(n_params, "n_params")
    _int(bits, "bits")
    if n_params < 0:
        raise ValueError("n_params must be >= 0")
    if bits <= 0:
        raise ValueError("bits must be > 0")
    total = n_params * bits
    if group_size is not None:
        _int(group_size, "group_size")
        _int(scale_bits, "scale_bits")
        if group_size <= 0:
            raise ValueError("group_size must be > 0")
        if scale_bits <= 0:
            raise ValueError("scale_bits must be > 0")
        groups = -(-n_params // group_size)
        total += groups * scale_bits
    return -(-total // 8)


def quantize_int8(x: torch.Tensor, scale: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    if not isinstance(x, torch.Tensor) or x.dim() != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError("x must be a 2-D tensor with at least one row and one column")
    x = x.to(torch.float32)
    rows = x.shape[0]
    if scale is None:
        amax = x.abs().amax(dim=1)
        scale = torch.where(amax == 0, torch.ones_like(amax), amax / 127)
    else:
        if not isinstance(scale, torch.Tensor) or tuple(scale.shape) != (rows,):
            raise ValueError("scale must have shape (rows,)")
        scale = scale.to(torch.float32)
        if not bool(torch.isfinite(scale).all()) or not bool((scale > 0).all()):
            raise ValueError("scale entries must be positive and finite")
    q = torch.round(x / scale.unsqueeze(1)).clamp(-127, 127).to(torch.int8)
    return q, scale


def dequantize_int8(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return q.to(torch.float32) * scale.to(torch.float32).unsqueeze(1)


_DIVISOR = {"fp16": 1, "bf16": 1, "fp8": 2, "int8": 2, "int4": 4}


def kv_cache_saving(fp16_bytes: int, dtype: str) -> int:
    if type(dtype) is not str or dtype not in _DIVISOR:
        raise ValueError(f"unknown dtype {dtype!r}")
    _int(fp16_bytes, "fp16_bytes")
    if fp16_bytes < 0:
        raise ValueError("fp16_bytes must be >= 0")
    quantized = math.ceil(fp16_bytes / _DIVISOR[dtype])
    return fp16_bytes - quantized
