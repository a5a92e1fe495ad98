"""One decode step of paged attention."""

from __future__ import annotations

import math

import torch


def _check(query, key_cache, value_cache, block_tables, context_lens):
    if query.dim() != 3:
        raise ValueError("query must be [num_seqs, num_heads, head_dim]")
    if key_cache.dim() != 4 or value_cache.dim() != 4:
        raise ValueError("caches must be [num_blocks, block_size, num_kv_heads, head_dim]")
    if key_cache.shape != value_cache.shape:
        raise ValueError("key and value caches differ in shape")
    num_seqs, num_heads, head_dim = query.shape
    num_blocks, block_size, num_kv_heads, cache_head_dim = key_cache.shape
    if cache_head_dim != head_dim:
        raise ValueError("head_dim mismatch")
    if num_kv_heads == 0 or num_heads % num_kv_heads != 0:
        raise ValueError("num_kv_heads must divide num_heads")
    if block_tables.dtype not in (torch.int32, torch.int64) or context_lens.dtype not in (torch.int32, torch.int64):
        raise ValueError("block_tables and context_lens must be integer tensors")
    if block_tables.dim() != 2 or block_tables.shape[0] != num_seqs:
        raise ValueError("block_tables must be [num_seqs, max_blocks]")
    if context_lens.dim() != 1 or context_lens.shape[0] != num_seqs:
        raise ValueError("context_lens must be [num_seqs]")
    max_blocks = block_tables.shape[1]
    lens = [int(x) for x in context_lens.tolist()]
    tables = block_tables.tolist()
    for i, n in enumerate(lens):
        if n < 1 or n > max_blocks * block_size:
            raise ValueError(f"context length {n} of sequence {i} out of range")
        used = -(-n // block_size)
        for b in tables[i][:used]:
            if b < 0 or b >= num_blocks:
                raise ValueError(f"block id {b} of sequence {i} outside the cache")
    return lens, tables


def paged_decode(query, key_cache, value_cache, block_tables, context_lens, scale=None):
    lens, tables = _check(query, key_cache, value_cache, block_tables, context_lens)
    num_seqs, num_heads, head_dim = query.shape
    block_size, num_kv_heads = key_cache.shape[1], key_cache.shape[2]
    group = num_heads // num_kv_heads
    if scale is None:
        scale = 1.0 / math.sqrt(head_dim)
    out = torch.empty(num_seqs, num_heads, head_dim, dtype=query.dtype, device=query.device)
    for i, n in enumerate(lens):
        used = -(-n // block_size)
        ids = torch.tensor(tables[i][:used], dtype=torch.long, device=key_cache.device)
        k = key_cache[ids].reshape(used * block_size, num_kv_heads, head_dim)[:n].float()
        v = value_cache[ids].reshape(used * block_size, num_kv_heads, head_dim)[:n].float()
        # expand kv heads to query heads: [n, num_heads, head_dim]
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        q = query[i].float()  # [num_heads, head_dim]
        scores = torch.einsum("hd,thd->ht", q, k) * scale
        weights = torch.softmax(scores, dim=-1)
        out[i] = torch.einsum("ht,thd->hd", weights, v).to(query.dtype)
    return out
