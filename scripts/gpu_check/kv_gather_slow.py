"""Known slow (the GPU check's speed phase, and its baseline): batched-kv-gather in torch, one copy per token, as the rung's naive baseline."""

from __future__ import annotations

import torch


def gather_kv(pages: torch.Tensor, block_tables: list[list[int]], lengths: list[int]) -> torch.Tensor:
    _, page_size, head_dim = pages.shape
    out = torch.zeros((len(lengths), max(lengths, default=0), head_dim), dtype=pages.dtype, device=pages.device)
    for row, (table, length) in enumerate(zip(block_tables, lengths, strict=True)):
        for token in range(length):
            out[row, token] = pages[table[token // page_size], token % page_size]
    return out
