"""Slices each used page and concatenates them."""

import numpy as np


def gather_kv(pages, block_tables, lengths):
    num_pages, page_size, head_dim = pages.shape
    if len(block_tables) != len(lengths):
        raise ValueError("one table per length")
    if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in lengths):
        raise ValueError("lengths are non-negative ints")
    longest = max(lengths) if lengths else 0
    out = np.zeros((len(lengths), longest, head_dim), dtype=pages.dtype)
    for i, n in enumerate(lengths):
        used = block_tables[i][: (n + page_size - 1) // page_size]
        if len(used) * page_size < n:
            raise ValueError("table too short")
        if any(p < 0 or p >= num_pages for p in used):
            raise ValueError("page id outside the cache")
        if used:
            out[i, :n] = np.concatenate([pages[p] for p in used])[:n]
    return out
