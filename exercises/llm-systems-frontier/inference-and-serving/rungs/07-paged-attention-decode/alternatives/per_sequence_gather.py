"""Correct, written from the instructions alone: for each sequence, gather
its n_i token rows with one index tensor built from its block table, then
attend for all heads at once with the K/V heads expanded by reshape
(query heads grouped as [num_kv_heads, g]); extra validation: the query and
caches must be floating-point tensors and scale a finite real number."""

from __future__ import annotations

import math

import torch


def _integer_tensor(t: object, what: str) -> torch.Tensor:
    if not isinstance(t, torch.Tensor) or t.dtype.is_floating_point or t.is_complex() or t.dtype == torch.bool:
        raise ValueError(f"{what} must be an integer tensor")
    return t


def paged_decode(query, key_cache, value_cache, block_tables, context_lens, scale=None):
    for t in (query, key_cache, value_cache):
        if not isinstance(t, torch.Tensor) or not t.dtype.is_floating_point:
            raise ValueError("query and caches must be floating-point tensors")
    if query.dim() != 3 or key_cache.dim() != 4 or key_cache.shape != value_cache.shape:
        raise ValueError("query must be 3-D and the caches 4-D of one shape")
    num_seqs, num_heads, head_dim = query.shape
    num_blocks, block_size, num_kv_heads, cache_dim = key_cache.shape
    if cache_dim != head_dim or num_heads % num_kv_heads:
        raise ValueError("head_dim or head counts do not match")
    block_tables = _integer_tensor(block_tables, "block_tables")
    context_lens = _integer_tensor(context_lens, "context_lens")
    if block_tables.dim() != 2 or block_tables.shape[0] != num_seqs or tuple(context_lens.shape) != (num_seqs,):
        raise ValueError("block_tables must be [num_seqs, max_blocks] and context_lens [num_seqs]")
    max_blocks = block_tables.shape[1]
    lens = context_lens.tolist()
    tables = block_tables.tolist()
    for n, row in zip(lens, tables, strict=True):
        if n < 1 or n > max_blocks * block_size:
            raise ValueError("context length out of range")
        for block in row[: -(-n // block_size)]:
            if block < 0 or block >= num_blocks:
                raise ValueError("block id out of range")
    if scale is None:
        scale = 1.0 / math.sqrt(head_dim)
    elif isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale):
        raise ValueError("scale must be a finite number")

    g = num_heads // num_kv_heads
    out = torch.empty((num_seqs, num_heads, head_dim), dtype=torch.float32, device=query.device)
    for i, (n, row) in enumerate(zip(lens, tables, strict=True)):
        positions = torch.arange(n, device=key_cache.device)
        blocks = torch.tensor(row[: -(-n // block_size)], dtype=torch.long, device=key_cache.device)
        which = blocks[positions // block_size]
        slots = positions % block_size
        k = key_cache[which, slots].to(torch.float32)  # [n, kv, d]
        v = value_cache[which, slots].to(torch.float32)
        q = query[i].to(torch.float32).reshape(num_kv_heads, g, head_dim)
        scores = torch.einsum("kgd,nkd->kgn", q, k) * scale
        weights = torch.softmax(scores, dim=-1)
        out[i] = torch.einsum("kgn,nkd->kgd", weights, v).reshape(num_heads, head_dim).to(out.device)
    return out.to(query.dtype)
