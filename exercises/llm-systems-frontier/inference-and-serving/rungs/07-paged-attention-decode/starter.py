"""One decode step of paged attention.

Fill in paged_decode. Keep `import torch` at the top: on a GPU the grader
reads torch.cuda's memory statistics through it.
"""

from __future__ import annotations

import math

import torch


def paged_decode(query, key_cache, value_cache, block_tables, context_lens, scale=None):
    """Attention output [num_seqs, num_heads, head_dim] of one new token per sequence.

    query:        [num_seqs, num_heads, head_dim]
    key_cache:    [num_blocks, block_size, num_kv_heads, head_dim] (value_cache alike)
    block_tables: [num_seqs, max_blocks] integer tensor of physical block ids
    context_lens: [num_seqs] integer tensor: cached tokens per sequence
    scale:        multiplies q . k; None means 1 / sqrt(head_dim)
    """
    raise NotImplementedError
