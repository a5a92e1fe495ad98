"""Quantization arithmetic.

Four small functions; see the instructions for the exact rules.
"""

from __future__ import annotations

import torch


def weight_bytes(n_params: int, bits: int, group_size: int | None = None, scale_bits: int = 16) -> int:
    """Bytes to store n_params weights of `bits` bits each.

    With group_size, every group of group_size weights (the last one may be
    partial) also stores one scale of scale_bits bits. Round the total up to
    whole bytes. Raise ValueError on bad input.
    """
    raise NotImplementedError


def quantize_int8(x: torch.Tensor, scale: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric per-row int8 quantization of a 2-D float32 tensor.

    Without `scale`, each row's scale is max|row| / 127 (1.0 for an all-zero
    row). Returns (q, scale): q is int8 with x's shape, values in [-127, 127];
    scale is float32 with shape (rows,).
    """
    raise NotImplementedError


def dequantize_int8(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Return q * scale (row by row) as float32."""
    raise NotImplementedError


def kv_cache_saving(fp16_bytes: int, dtype: str) -> int:
    """Bytes freed by storing an fp16 KV cache of fp16_bytes in dtype instead.

    dtype is one of "fp16", "bf16", "fp8", "int8", "int4".
    """
    raise NotImplementedError
