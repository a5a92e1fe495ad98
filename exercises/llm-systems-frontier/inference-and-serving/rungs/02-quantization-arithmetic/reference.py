"""Reference solution: quantization arithmetic."""

from __future__ import annotations

import torch

QMAX = 127  # symmetric int8: [-127, 127]; -128 is never used


def _non_negative_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    return value


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def weight_bytes(n_params: int, bits: int, group_size: int | None = None, scale_bits: int = 16) -> int:
    """Bytes to store n_params weights of `bits` bits, plus one scale per group."""
    n_params = _non_negative_int(n_params, "n_params")
    bits = _positive_int(bits, "bits")
    total_bits = n_params * bits
    if group_size is not None:
        group_size = _positive_int(group_size, "group_size")
        scale_bits = _positive_int(scale_bits, "scale_bits")
        groups = -(-n_params // group_size)  # a partial last group still needs its scale
        total_bits += groups * scale_bits
    return -(-total_bits // 8)  # whole bytes, rounded up


def quantize_int8(x: torch.Tensor, scale: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric per-row int8 quantization. Returns (q int8, scale float32 [rows])."""
    if x.dim() != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"x must be 2-D (rows x columns) with at least one of each, got shape {tuple(x.shape)}")
    x = x.to(torch.float32)  # fp16 / bf16 / fp64 inputs: every step in float32
    if scale is None:
        scale = x.abs().amax(dim=1) / QMAX
        scale = torch.where(scale == 0, torch.ones_like(scale), scale)  # all-zero row: any scale works; use 1
    else:
        scale = scale.to(torch.float32)
        if scale.shape != (x.shape[0],):
            raise ValueError(f"scale must have shape ({x.shape[0]},), got {tuple(scale.shape)}")
        if not bool((scale > 0).all()) or not bool(torch.isfinite(scale).all()):
            raise ValueError("every scale must be positive and finite")
    # torch.round sends halves to the even neighbour (2.5 -> 2, -3.5 -> -4).
    q = torch.clamp(torch.round(x / scale[:, None]), -QMAX, QMAX).to(torch.int8)
    return q, scale


def dequantize_int8(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Back to float32: q * scale, row by row."""
    return q.to(torch.float32) * scale.to(torch.float32)[:, None]


# Size of one cache element relative to fp16 (2 bytes), as a fraction num/den.
_CACHE_FRACTION = {"fp16": (1, 1), "bf16": (1, 1), "fp8": (1, 2), "int8": (1, 2), "int4": (1, 4)}


def kv_cache_saving(fp16_bytes: int, dtype: str) -> int:
    """Bytes freed by storing an fp16 KV cache of fp16_bytes in `dtype` instead."""
    fp16_bytes = _non_negative_int(fp16_bytes, "fp16_bytes")
    if not isinstance(dtype, str) or dtype not in _CACHE_FRACTION:  # None or a list too: ValueError
        raise ValueError(f"unknown cache dtype {dtype!r}; expected one of {sorted(_CACHE_FRACTION)}")
    num, den = _CACHE_FRACTION[dtype]
    quantized = -(-fp16_bytes * num // den)  # rounded up to whole bytes
    return fp16_bytes - quantized
