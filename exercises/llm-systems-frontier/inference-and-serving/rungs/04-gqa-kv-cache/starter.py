"""Grouped-query attention with a KV cache.

Fill in KVCache. Shapes: q is [batch, n_heads, T, head_dim]; k and v are
[batch, n_kv_heads, T, head_dim] for T new tokens. See the instructions.
"""

from __future__ import annotations

import torch


class KVCache:
    def __init__(self, n_heads: int, n_kv_heads: int, head_dim: int) -> None:
        # Validate (ValueError), then start with an empty cache.
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.head_dim = head_dim
        self.length = 0  # tokens cached so far
        self._k = None
        self._v = None

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Append k and v of the T new tokens to the cache, then return the
        causal attention output of their queries, [batch, n_heads, T, head_dim].

        Each new token attends to every cached position up to and including
        its own, with scores scaled by 1 / sqrt(head_dim).
        """
        raise NotImplementedError

    def keys(self) -> torch.Tensor:
        """Cached keys, [batch, n_kv_heads, length, head_dim]."""
        raise NotImplementedError

    def values(self) -> torch.Tensor:
        """Cached values, [batch, n_kv_heads, length, head_dim]."""
        raise NotImplementedError

