"""Wrong solution: divides by a given float64 scale as is, so the division and its ties happen in float64."""
from __future__ import annotations

import torch

_KV_DIV = {"fp16": 1, "bf16": 1, "fp8": 2, "int8": 2, "int4": 4}


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def weight_bytes(n_params: int, bits: int, group_size: int | None = None, scale_bits: int = 16) -> int:
    if not _is_int(n_params) or n_params < 0:
        raise ValueError("n_params")
    if not _is_int(bits) or bits <= 0:
        raise ValueError("bits")
    total = n_params * bits
    if group_size is not None:
        if not _is_int(group_size) or group_size <= 0:
            raise ValueError("group_size")
        if not _is_int(scale_bits) or scale_bits <= 0:
            raise ValueError("scale_bits")
        groups = -(-n_params // group_size)
        total += groups * scale_bits
    return -(-total // 8)


def quantize_int8(x: torch.Tensor, scale: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    if not isinstance(x, torch.Tensor) or x.dim() != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError("x must be a non-empty 2-D tensor")
    if x.dtype not in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        raise ValueError("x dtype")
    v = x.to(torch.float32)
    rows = v.shape[0]
    if scale is None:
        amax = v.abs().amax(dim=1)
        s = torch.where(amax == 0, torch.ones_like(amax), amax / 127)
    else:
        if not isinstance(scale, torch.Tensor) or tuple(scale.shape) != (rows,):
            raise ValueError("scale shape")
        s = scale.to(torch.float32)
        if not bool(torch.isfinite(s).all()) or not bool((s > 0).all()):
            raise ValueError("scale must be positive and finite")
    q = torch.round(v / (s if scale is None else scale)[:, None]).clamp(-127, 127).to(torch.int8)
    return q, s


def dequantize_int8(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return q.to(torch.float32) * scale.to(torch.float32)[:, None]


def kv_cache_saving(fp16_bytes: int, dtype: str) -> int:
    if not isinstance(dtype, str) or dtype not in _KV_DIV:
        raise ValueError("dtype")
    if not _is_int(fp16_bytes) or fp16_bytes < 0:
        raise ValueError("fp16_bytes")
    d = _KV_DIV[dtype]
    return fp16_bytes - (-(-fp16_bytes // d))
