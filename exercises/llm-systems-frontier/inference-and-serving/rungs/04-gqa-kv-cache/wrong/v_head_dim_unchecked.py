"""Grouped-query attention with a KV cache."""

from __future__ import annotations

import math

import torch


def _is_pos_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x > 0


class KVCache:
    def __init__(self, n_heads: int, n_kv_heads: int, head_dim: int) -> None:
        if not (_is_pos_int(n_heads) and _is_pos_int(n_kv_heads) and _is_pos_int(head_dim)):
            raise ValueError("sizes must be positive ints")
        if n_heads % n_kv_heads != 0:
            raise ValueError("n_kv_heads must divide n_heads")
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.head_dim = head_dim
        self.length = 0
        self._k = None
        self._v = None

    def _check(self, q, k, v):
        for name, t in (("q", q), ("k", k), ("v", v)):
            if t.dim() != 4:
                raise ValueError(f"{name} must be 4-D")
            if name != "v" and t.shape[-1] != self.head_dim:
                raise ValueError(f"{name} last dim must be head_dim")
        if q.shape[1] != self.n_heads:
            raise ValueError("q must have n_heads heads")
        if k.shape[1] != self.n_kv_heads or v.shape[1] != self.n_kv_heads:
            raise ValueError("k and v must have n_kv_heads heads")
        if not (q.shape[0] == k.shape[0] == v.shape[0]):
            raise ValueError("batch sizes disagree")
        if not (q.shape[2] == k.shape[2] == v.shape[2]):
            raise ValueError("token counts disagree")
        if self._k is not None and q.shape[0] != self._k.shape[0]:
            raise ValueError("batch size differs from the cache")

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        self._check(q, k, v)
        batch, _, T, d = q.shape
        if T == 0:
            return torch.zeros(batch, self.n_heads, 0, d, dtype=torch.float32)
        k32 = k.detach().to("cpu", torch.float32)
        v32 = v.detach().to("cpu", torch.float32)
        new_k = k32.clone() if self._k is None else torch.cat([self._k, k32], dim=2)
        new_v = v32.clone() if self._v is None else torch.cat([self._v, v32], dim=2)
        self._k, self._v = new_k, new_v
        P = self.length
        self.length = P + T
        g = self.n_heads // self.n_kv_heads
        K = new_k.repeat_interleave(g, dim=1)
        V = new_v.repeat_interleave(g, dim=1)
        scores = q.to(torch.float32) @ K.transpose(-1, -2) / math.sqrt(d)
        mask = torch.ones(T, P + T, dtype=torch.bool).tril(diagonal=P)
        scores = scores.masked_fill(~mask, float("-inf"))
        return torch.softmax(scores, dim=-1) @ V

    def keys(self) -> torch.Tensor:
        if self._k is None:
            return torch.empty(0, self.n_kv_heads, 0, self.head_dim, dtype=torch.float32)
        return self._k.clone()

    def values(self) -> torch.Tensor:
        if self._v is None:
            return torch.empty(0, self.n_kv_heads, 0, self.head_dim, dtype=torch.float32)
        return self._v.clone()
