"""Wrong: the scale argument is ignored."""

from __future__ import annotations

import math

import torch


def _check_inputs(query, key_cache, value_cache, block_tables, context_lens):
    if query.dim() != 3 or key_cache.dim() != 4:
        raise ValueError("query must be [num_seqs, num_heads, head_dim] and key_cache [num_blocks, block_size, num_kv_heads, head_dim]")
    if value_cache.shape != key_cache.shape:
        raise ValueError(f"value_cache has shape {tuple(value_cache.shape)}, key_cache {tuple(key_cache.shape)}")
    num_seqs, num_heads, head_dim = query.shape
    num_blocks, block_size, num_kv_heads, cache_dim = key_cache.shape
    if cache_dim != head_dim or num_heads % num_kv_heads:
        raise ValueError(f"{num_heads} query heads of size {head_dim} cannot read {num_kv_heads} KV heads of size {cache_dim}")
    if block_tables.is_floating_point() or context_lens.is_floating_point():
        raise ValueError("block_tables and context_lens hold integers")
    if block_tables.dim() != 2 or block_tables.shape[0] != num_seqs or tuple(context_lens.shape) != (num_seqs,):
        raise ValueError("block_tables must be [num_seqs, max_blocks] and context_lens [num_seqs]")
    capacity = block_tables.shape[1] * block_size
    for seq, length in enumerate(context_lens.tolist()):
        if not 1 <= length <= capacity:
            raise ValueError(f"sequence {seq}: context length {length} is outside 1..{capacity}")
        used = block_tables[seq, : -(-length // block_size)]
        if used.min() < 0 or used.max() >= num_blocks:
            raise ValueError(f"sequence {seq}: its block table names a block that is not among the cache's {num_blocks}")


def paged_decode(query, key_cache, value_cache, block_tables, context_lens, scale=None):
    """Attention output [num_seqs, num_heads, head_dim] of one new token per sequence."""
    _check_inputs(query, key_cache, value_cache, block_tables, context_lens)
    num_seqs, num_heads, head_dim = query.shape
    block_size, num_kv_heads = key_cache.shape[1], key_cache.shape[2]
    group = num_heads // num_kv_heads
    scale = 1.0 / math.sqrt(head_dim)
    out = torch.empty_like(query)
    for seq, length in enumerate(context_lens.tolist()):
        used = -(-length // block_size)
        blocks = block_tables[seq, :used].to(device=key_cache.device, dtype=torch.long)
        # Gather this sequence's blocks only: its keys in token order, cut to its length.
        keys = key_cache[blocks].reshape(used * block_size, num_kv_heads, head_dim)[:length].float()
        values = value_cache[blocks].reshape(used * block_size, num_kv_heads, head_dim)[:length].float()
        # Query head h reads KV head h // group.
        q = query[seq].float().reshape(num_kv_heads, group, head_dim)
        weights = torch.softmax(torch.einsum("kgd,tkd->kgt", q, keys) * scale, dim=-1)
        out[seq] = torch.einsum("kgt,tkd->kgd", weights, values).reshape(num_heads, head_dim).to(query.dtype)
    return out
