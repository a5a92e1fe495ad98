"""One flat fancy index over the whole batch."""

import numpy as np


def gather_kv(pages, block_tables, lengths):
    num_pages, page_size, head_dim = pages.shape
    if len(block_tables) != len(lengths):
        raise ValueError("one table per length")
    for n in lengths:
        if type(n) is not int or n < 0:
            raise ValueError("lengths are non-negative ints")
    flat = pages.reshape(num_pages * page_size, head_dim)
    out = np.zeros((len(lengths), max([0, *lengths]), head_dim), dtype=pages.dtype)
    for i, n in enumerate(lengths):
        if n == 0:
            continue
        count = (n - 1) // page_size + 1
        table = np.asarray(block_tables[i][:count], dtype=np.int64)
        if table.size < count or (table < 0).any() or (table >= num_pages).any():
            raise ValueError("bad block table")
        tokens = np.arange(n)
        out[i, :n] = flat[table[tokens // page_size] * page_size + tokens % page_size]
    return out
