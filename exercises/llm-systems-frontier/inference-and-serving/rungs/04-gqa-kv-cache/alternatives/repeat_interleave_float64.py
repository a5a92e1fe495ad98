"""Correct, written from the instructions alone: the cache kept as a list
of float32 chunks concatenated on demand, scores and softmax computed in
float64 over K/V heads repeated with repeat_interleave, an explicit
boolean causal mask, and every argument checked before anything changes."""

from __future__ import annotations

import math

import torch


def _positive(value: object) -> int:
    if type(value) is not int or value <= 0:
        raise ValueError(f"sizes must be positive ints, got {value!r}")
    return value


class KVCache:
    def __init__(self, n_heads: int, n_kv_heads: int, head_dim: int) -> None:
        self.n_heads = _positive(n_heads)
        self.n_kv_heads = _positive(n_kv_heads)
        self.head_dim = _positive(head_dim)
        if n_heads % n_kv_heads:
            raise ValueError("n_kv_heads must divide n_heads")
        self._batch: int | None = None
        self._k_chunks: list[torch.Tensor] = []
        self._v_chunks: list[torch.Tensor] = []
        self.length = 0

    def _check(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        for t in (q, k, v):
            if not isinstance(t, torch.Tensor) or t.dim() != 4:
                raise ValueError("q, k and v must be 4-D tensors")
        if q.shape[1] != self.n_heads or k.shape[1] != self.n_kv_heads or v.shape[1] != self.n_kv_heads:
            raise ValueError("wrong number of heads")
        if q.shape[3] != self.head_dim or k.shape[3] != self.head_dim or v.shape[3] != self.head_dim:
            raise ValueError("wrong head_dim")
        if not (q.shape[0] == k.shape[0] == v.shape[0]) or not (q.shape[2] == k.shape[2] == v.shape[2]):
            raise ValueError("q, k and v disagree on batch or tokens")
        if self._batch is not None and q.shape[0] != self._batch:
            raise ValueError("batch size differs from the cache's")

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        self._check(q, k, v)
        batch, _, new, _ = q.shape
        self._batch = batch
        past = self.length
        self._k_chunks.append(k.detach().to(torch.float32).cpu().clone())
        self._v_chunks.append(v.detach().to(torch.float32).cpu().clone())
        self.length = past + new
        keys = torch.cat(self._k_chunks, dim=2).to(torch.float64)
        values = torch.cat(self._v_chunks, dim=2).to(torch.float64)
        group = self.n_heads // self.n_kv_heads
        keys = keys.repeat_interleave(group, dim=1)
        values = values.repeat_interleave(group, dim=1)
        scores = q.detach().cpu().to(torch.float64) @ keys.transpose(-1, -2) / math.sqrt(self.head_dim)
        positions = torch.arange(self.length)
        allowed = positions.unsqueeze(0) <= (past + torch.arange(new)).unsqueeze(1)  # [new, length]
        scores = scores.masked_fill(~allowed, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return (weights @ values).to(torch.float32)

    def _stack(self, chunks: list[torch.Tensor]) -> torch.Tensor:
        if not chunks:
            return torch.empty((0, self.n_kv_heads, 0, self.head_dim), dtype=torch.float32)
        return torch.cat(chunks, dim=2)

    def keys(self) -> torch.Tensor:
        return self._stack(self._k_chunks)

    def values(self) -> torch.Tensor:
        return self._stack(self._v_chunks)
