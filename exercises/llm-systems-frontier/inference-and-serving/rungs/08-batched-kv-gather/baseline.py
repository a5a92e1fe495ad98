"""The speed phase's baseline: a Python loop over every token (never shown to learners)."""

from __future__ import annotations

import numpy as np


def gather_kv(pages, block_tables, lengths):
    num_pages, page_size, head_dim = pages.shape
    if len(block_tables) != len(lengths):
        raise ValueError("one block table per sequence")
    for length in lengths:
        if type(length) is not int or length < 0:
            raise ValueError("bad length")
    out = np.zeros((len(lengths), max(lengths, default=0), head_dim), dtype=pages.dtype)
    for row, (table, length) in enumerate(zip(block_tables, lengths)):
        if len(table) < -(-length // page_size):
            raise ValueError("table too short")
        for token in range(length):
            page = table[token // page_size]
            if not 0 <= page < num_pages:
                raise ValueError("page outside the cache")
            out[row, token] = pages[page, token % page_size]
    return out
