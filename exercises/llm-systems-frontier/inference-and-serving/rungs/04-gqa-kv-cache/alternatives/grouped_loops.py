"""Correct, written from the instructions alone: preallocated buffers that
double when full, attention computed per K/V head on a [g * T] block of
its query heads (no repeated K/V), a softmax written out with the row
maximum subtracted, and a loop over new tokens for the causal limit."""

from __future__ import annotations

import math

import torch


class KVCache:
    def __init__(self, n_heads: int, n_kv_heads: int, head_dim: int) -> None:
        for value in (n_heads, n_kv_heads, head_dim):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError("n_heads, n_kv_heads and head_dim must be positive ints")
        if n_heads % n_kv_heads != 0:
            raise ValueError("n_kv_heads must divide n_heads")
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, head_dim
        self._k: torch.Tensor | None = None
        self._v: torch.Tensor | None = None
        self._used = 0

    @property
    def length(self) -> int:
        return self._used

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
            raise ValueError("4-D tensors expected")
        b, h, t, d = q.shape
        if tuple(k.shape) != (b, self.n_kv_heads, t, self.head_dim) or tuple(v.shape) != tuple(k.shape):
            raise ValueError("k and v must be [batch, n_kv_heads, T, head_dim] like q")
        if h != self.n_heads or d != self.head_dim:
            raise ValueError("q must be [batch, n_heads, T, head_dim]")
        if self._k is not None and self._k.shape[0] != b:
            raise ValueError("another batch size than the cache's")
        if self._k is None:
            self._k = torch.zeros((b, self.n_kv_heads, max(t, 4), d), dtype=torch.float32)
            self._v = torch.zeros_like(self._k)
        assert self._v is not None
        start, end = self._used, self._used + t
        if end > self._k.shape[2]:
            capacity = max(end, 2 * self._k.shape[2])
            grown_k = torch.zeros((b, self.n_kv_heads, capacity, d), dtype=torch.float32)
            grown_v = torch.zeros_like(grown_k)
            grown_k[:, :, :start] = self._k[:, :, :start]
            grown_v[:, :, :start] = self._v[:, :, :start]
            self._k, self._v = grown_k, grown_v
        self._k[:, :, start:end] = k.detach().cpu().to(torch.float32)
        self._v[:, :, start:end] = v.detach().cpu().to(torch.float32)
        self._used = end

        g = self.n_heads // self.n_kv_heads
        out = torch.empty((b, h, t, d), dtype=torch.float32)
        qf = q.detach().cpu().to(torch.float32)
        for kv in range(self.n_kv_heads):
            keys = self._k[:, kv, :end]  # [b, end, d]
            values = self._v[:, kv, :end]
            for i in range(t):
                visible = start + i + 1
                queries = qf[:, kv * g:(kv + 1) * g, i]  # [b, g, d]
                scores = queries @ keys[:, :visible].transpose(1, 2) / math.sqrt(d)  # [b, g, visible]
                scores = scores - scores.amax(dim=-1, keepdim=True)
                weights = scores.exp()
                weights = weights / weights.sum(dim=-1, keepdim=True)
                out[:, kv * g:(kv + 1) * g, i] = weights @ values[:, :visible]
        return out

    def keys(self) -> torch.Tensor:
        if self._k is None:
            return torch.empty((0, self.n_kv_heads, 0, self.head_dim), dtype=torch.float32)
        return self._k[:, :, :self._used].clone()

    def values(self) -> torch.Tensor:
        if self._v is None:
            return torch.empty((0, self.n_kv_heads, 0, self.head_dim), dtype=torch.float32)
        return self._v[:, :, :self._used].clone()
