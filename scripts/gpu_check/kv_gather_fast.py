"""Known fast (the GPU check's speed phase): batched-kv-gather in torch, one gather for the whole batch on the cache's device."""

from __future__ import annotations

import torch


def gather_kv(pages: torch.Tensor, block_tables: list[list[int]], lengths: list[int]) -> torch.Tensor:
    num_pages, page_size, head_dim = pages.shape
    longest = max(lengths, default=0)
    out = torch.zeros((len(lengths), longest, head_dim), dtype=pages.dtype, device=pages.device)
    if not longest:
        return out
    width = -(-longest // page_size)
    padded = [list(table[:width]) + [0] * (width - len(table[:width])) for table in block_tables]
    tables = torch.tensor(padded, dtype=torch.long, device=pages.device)
    positions = torch.arange(longest, device=pages.device)
    rows = tables[:, positions // page_size] * page_size + positions % page_size
    kept = positions < torch.tensor(lengths, device=pages.device)[:, None]
    gathered = pages.reshape(-1, head_dim)[rows.clamp(0, num_pages * page_size - 1)]
    return torch.where(kept[..., None], gathered, out)
