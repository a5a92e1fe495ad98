"""Wrong solution: multiplies the query by the scale in its own half dtype before converting it to float32."""
from __future__ import annotations

import math

import torch


def paged_decode(query, key_cache, value_cache, block_tables, context_lens, scale=None):
    if query.dim() != 3:
        raise ValueError("query must be 3-D")
    if key_cache.dim() != 4 or value_cache.dim() != 4:
        raise ValueError("caches must be 4-D")
    if key_cache.shape != value_cache.shape:
        raise ValueError("caches differ in shape")
    num_seqs, num_heads, head_dim = query.shape
    num_blocks, block_size, num_kv_heads, kd = key_cache.shape
    if kd != head_dim:
        raise ValueError("head_dim")
    if num_kv_heads == 0 or num_heads % num_kv_heads != 0:
        raise ValueError("num_kv_heads must divide num_heads")
    for t in (block_tables, context_lens):
        if t.dtype.is_floating_point or t.dtype.is_complex:
            raise ValueError("integer tensors expected")
    if block_tables.dim() != 2 or block_tables.shape[0] != num_seqs:
        raise ValueError("block_tables shape")
    if context_lens.dim() != 1 or context_lens.shape[0] != num_seqs:
        raise ValueError("context_lens shape")
    max_blocks = block_tables.shape[1]
    lens = [int(x) for x in context_lens.tolist()]
    tables = block_tables.tolist()
    for i, n in enumerate(lens):
        if n < 1 or n > max_blocks * block_size:
            raise ValueError("context length out of range")
        used = -(-n // block_size)
        for b in tables[i][:used]:
            if b < 0 or b >= num_blocks:
                raise ValueError("block id out of range")
    if scale is None:
        scale = 1.0 / math.sqrt(head_dim)
    group = num_heads // num_kv_heads
    out = torch.empty(num_seqs, num_heads, head_dim, dtype=torch.float32, device=query.device)
    dev = key_cache.device
    for i, n in enumerate(lens):
        used = -(-n // block_size)
        ids = torch.tensor(tables[i][:used], dtype=torch.long, device=dev)
        k = key_cache.index_select(0, ids).reshape(used * block_size, num_kv_heads, head_dim)[:n].float()
        v = value_cache.index_select(0, ids).reshape(used * block_size, num_kv_heads, head_dim)[:n].float()
        q = (query[i] * scale).to(dev).float().reshape(num_kv_heads, group, head_dim)
        # scores [kv, group, n]
        scores = torch.einsum("hgd,thd->hgt", q, k)
        w = torch.softmax(scores, dim=-1)
        o = torch.einsum("hgt,thd->hgd", w, v)
        out[i] = o.reshape(num_heads, head_dim).to(out.device)
    return out.to(query.dtype)
