"""Correct, written from the instructions alone: reads one block at a time
and keeps a running maximum, denominator and weighted sum per head (the
online softmax of flash-decoding), with K/V heads repeated by
repeat_interleave; checks run in another order than the rules list them."""

from __future__ import annotations

import math

import torch


def paged_decode(query, key_cache, value_cache, block_tables, context_lens, scale=None):
    if block_tables.dtype.is_floating_point or context_lens.dtype.is_floating_point:
        raise ValueError("block_tables and context_lens must be integer tensors")
    if key_cache.dim() != 4 or value_cache.dim() != 4 or query.dim() != 3:
        raise ValueError("bad number of dimensions")
    if key_cache.shape != value_cache.shape:
        raise ValueError("key and value caches differ in shape")
    num_blocks, block_size, num_kv_heads, head_dim = key_cache.shape
    num_seqs, num_heads, q_dim = query.shape
    if q_dim != head_dim:
        raise ValueError("head_dim differs")
    if num_heads % num_kv_heads != 0:
        raise ValueError("num_kv_heads must divide num_heads")
    if context_lens.dim() != 1 or context_lens.shape[0] != num_seqs:
        raise ValueError("context_lens must be [num_seqs]")
    if block_tables.dim() != 2 or block_tables.shape[0] != num_seqs:
        raise ValueError("block_tables must be [num_seqs, max_blocks]")
    max_blocks = block_tables.shape[1]
    lens = [int(n) for n in context_lens.tolist()]
    if any(n < 1 or n > max_blocks * block_size for n in lens):
        raise ValueError("context length out of range")
    used = [block_tables[i, : (n + block_size - 1) // block_size].tolist() for i, n in enumerate(lens)]
    if any(b < 0 or b >= num_blocks for row in used for b in row):
        raise ValueError("used block id out of range")
    s = (1.0 / math.sqrt(head_dim)) if scale is None else float(scale)

    g = num_heads // num_kv_heads
    results = []
    for i, n in enumerate(lens):
        q = query[i].to(torch.float32)  # [h, d]
        running_max = torch.full((num_heads,), float("-inf"), device=query.device)
        denom = torch.zeros(num_heads, device=query.device)
        acc = torch.zeros((num_heads, head_dim), device=query.device)
        for j, block in enumerate(used[i]):
            count = min(block_size, n - j * block_size)
            k = key_cache[block, :count].to(torch.float32).to(query.device).repeat_interleave(g, dim=1)  # [c, h, d]
            v = value_cache[block, :count].to(torch.float32).to(query.device).repeat_interleave(g, dim=1)
            scores = (q.unsqueeze(0) * k).sum(-1) * s  # [c, h]
            new_max = torch.maximum(running_max, scores.max(dim=0).values)
            correction = torch.exp(running_max - new_max)
            p = torch.exp(scores - new_max.unsqueeze(0))  # [c, h]
            denom = denom * correction + p.sum(0)
            acc = acc * correction.unsqueeze(1) + (p.unsqueeze(2) * v).sum(0)
            running_max = new_max
        results.append(acc / denom.unsqueeze(1))
    if not results:
        return torch.empty((0, num_heads, head_dim), dtype=query.dtype, device=query.device)
    return torch.stack(results).to(query.dtype)
