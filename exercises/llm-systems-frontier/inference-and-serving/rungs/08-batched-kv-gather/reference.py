"""Reference solution: gather a batch's keys from a paged KV cache, one array operation per sequence."""

from __future__ import annotations

import numpy as np


def gather_kv(pages, block_tables, lengths):
    """A padded [batch, max(lengths), head_dim] copy of each sequence's cached rows."""
    num_pages, page_size, head_dim = pages.shape
    if len(block_tables) != len(lengths):
        raise ValueError("one block table per sequence")
    for length in lengths:
        if type(length) is not int or length < 0:
            raise ValueError(f"a length is a non-negative int, not {length!r}")
    out = np.zeros((len(lengths), max(lengths, default=0), head_dim), dtype=pages.dtype)
    for row, (table, length) in enumerate(zip(block_tables, lengths)):
        needed = -(-length // page_size)
        if len(table) < needed:
            raise ValueError(f"{length} tokens need {needed} pages; the table lists {len(table)}")
        ids = np.array(table[:needed], dtype=np.int64)
        if needed and (ids.min() < 0 or ids.max() >= num_pages):
            raise ValueError("a page id outside the cache")
        out[row, :length] = pages[ids].reshape(-1, head_dim)[:length]
    return out
