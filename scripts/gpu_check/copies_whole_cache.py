"""Wrong only on a GPU: correct numbers, but every sequence's K and V are first
gathered into one contiguous, padded float32 tensor (a copy of the whole cache).
The CPU tests cannot tell; the GPU memory check must."""

from __future__ import annotations

import math

import torch

# gpu_check.py puts the rung's reference.py beside this file: its input checks
# are right, only the memory use below is wrong.
from reference import _check_inputs  # type: ignore[import-not-found]


def paged_decode(
    query: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor, block_tables: torch.Tensor, context_lens: torch.Tensor, scale: float | None = None
) -> torch.Tensor:
    _check_inputs(query, key_cache, value_cache, block_tables, context_lens)
    num_seqs, num_heads, head_dim = query.shape
    block_size, num_kv_heads = key_cache.shape[1], key_cache.shape[2]
    group = num_heads // num_kv_heads
    scale = 1.0 / math.sqrt(head_dim) if scale is None else float(scale)
    tables = block_tables.to(device=key_cache.device, dtype=torch.long).clamp(0, key_cache.shape[0] - 1)
    width = tables.shape[1] * block_size
    keys = key_cache[tables].reshape(num_seqs, width, num_kv_heads, head_dim).float()
    values = value_cache[tables].reshape(num_seqs, width, num_kv_heads, head_dim).float()
    positions = torch.arange(width, device=key_cache.device)
    # Slots past a length may hold NaN or inf (a hidden test puts them there): zeroed, so only the copy is wrong.
    unread = (positions >= context_lens.to(key_cache.device)[:, None])[:, :, None, None]
    keys, values = keys.masked_fill(unread, 0.0), values.masked_fill(unread, 0.0)
    q = query.float().reshape(num_seqs, num_kv_heads, group, head_dim)
    scores = torch.einsum("skgd,stkd->skgt", q, keys) * scale
    lengths = context_lens.to(key_cache.device)[:, None, None, None]
    scores = scores.masked_fill(positions >= lengths, float("-inf"))
    out = torch.einsum("skgt,stkd->skgd", torch.softmax(scores, dim=-1), values)
    return out.reshape(num_seqs, num_heads, head_dim).to(query.dtype)
