"""Wrong solution: gathers every sequence's whole padded block row, padding and stale slots included, and masks the scores afterwards."""

from __future__ import annotations

import math

import torch


def _validate(query, key_cache, value_cache, block_tables, context_lens):
    for name, t in (("query", query), ("key_cache", key_cache), ("value_cache", value_cache),
                    ("block_tables", block_tables), ("context_lens", context_lens)):
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{name} must be a tensor")
    if query.dim() != 3:
        raise ValueError("query must be [num_seqs, num_heads, head_dim]")
    if key_cache.dim() != 4 or value_cache.dim() != 4:
        raise ValueError("caches must be [num_blocks, block_size, num_kv_heads, head_dim]")
    if key_cache.shape != value_cache.shape:
        raise ValueError("key and value caches differ in shape")
    num_seqs, num_heads, head_dim = query.shape
    num_blocks, block_size, num_kv_heads, cache_dim = key_cache.shape
    if cache_dim != head_dim:
        raise ValueError("head_dim of the cache differs from the query's")
    if num_kv_heads == 0 or num_heads % num_kv_heads != 0:
        raise ValueError("num_kv_heads must divide num_heads")
    for name, t in (("block_tables", block_tables), ("context_lens", context_lens)):
        if t.is_floating_point() or t.is_complex():
            raise ValueError(f"{name} must be an integer tensor")
    if block_tables.dim() != 2 or block_tables.shape[0] != num_seqs:
        raise ValueError("block_tables must be [num_seqs, max_blocks]")
    if context_lens.dim() != 1 or context_lens.shape[0] != num_seqs:
        raise ValueError("context_lens must be [num_seqs]")
    max_blocks = block_tables.shape[1]
    lens = [int(x) for x in context_lens.tolist()]
    tables = block_tables.to("cpu", torch.int64)
    for i, n in enumerate(lens):
        if n < 1 or n > max_blocks * block_size:
            raise ValueError(f"context length {n} of sequence {i} out of range")
        used = tables[i, : -(-n // block_size)]
        if used.numel() and (int(used.min()) < 0 or int(used.max()) >= num_blocks):
            raise ValueError(f"block table of sequence {i} points outside the cache")
    return lens, tables


def paged_decode(query, key_cache, value_cache, block_tables, context_lens, scale=None):
    """Attention output [num_seqs, num_heads, head_dim] of one new token per sequence."""
    lens, tables = _validate(query, key_cache, value_cache, block_tables, context_lens)
    num_seqs, num_heads, head_dim = query.shape
    _, block_size, num_kv_heads, _ = key_cache.shape
    group = num_heads // num_kv_heads
    if scale is None:
        scale = 1.0 / math.sqrt(head_dim)
    num_blocks = key_cache.shape[0]
    max_blocks = tables.shape[1]
    # gather every sequence into one padded [num_seqs, max_len, kv, d] tensor (padding clamped, then masked)
    idx = tables.clamp(0, num_blocks - 1).to(key_cache.device)
    max_len = max_blocks * block_size
    keys = key_cache[idx].reshape(num_seqs, max_len, num_kv_heads, head_dim).float()
    values = value_cache[idx].reshape(num_seqs, max_len, num_kv_heads, head_dim).float()
    q = query.float().reshape(num_seqs, num_kv_heads, group, head_dim).to(key_cache.device)
    scores = torch.einsum("skgd,snkd->skgn", q, keys) * scale
    lens_t = torch.tensor(lens, device=key_cache.device)
    mask = torch.arange(max_len, device=key_cache.device)[None, :] >= lens_t[:, None]
    scores = scores.masked_fill(mask[:, None, None, :], float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    o = torch.einsum("skgn,snkd->skgd", weights, values)
    return o.reshape(num_seqs, num_heads, head_dim).to(device=query.device, dtype=query.dtype)
