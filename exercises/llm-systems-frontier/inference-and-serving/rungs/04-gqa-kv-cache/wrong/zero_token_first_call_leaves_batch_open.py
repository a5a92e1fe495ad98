"""Wrong solution: caches nothing on a first call with zero tokens, so keys() stays (0, n_kv_heads, 0, head_dim) and another batch size is accepted later."""
from __future__ import annotations

import math

import torch


def _pos_int(x):
    return type(x) is int and x > 0


class KVCache:
    def __init__(self, n_heads: int, n_kv_heads: int, head_dim: int) -> None:
        if not (_pos_int(n_heads) and _pos_int(n_kv_heads) and _pos_int(head_dim)):
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
        for t in (q, k, v):
            if not isinstance(t, torch.Tensor) or t.dim() != 4:
                raise ValueError("q, k, v must be 4-D tensors")
        if q.shape[1] != self.n_heads:
            raise ValueError("q heads")
        if k.shape[1] != self.n_kv_heads or v.shape[1] != self.n_kv_heads:
            raise ValueError("k/v heads")
        if q.shape[3] != self.head_dim or k.shape[3] != self.head_dim or v.shape[3] != self.head_dim:
            raise ValueError("head_dim")
        if not (q.shape[0] == k.shape[0] == v.shape[0]):
            raise ValueError("batch")
        if not (q.shape[2] == k.shape[2] == v.shape[2]):
            raise ValueError("T")
        if self._k is not None and q.shape[0] != self._k.shape[0]:
            raise ValueError("batch differs from cache")

    def attend(self, q, k, v):
        self._check(q, k, v)
        b, _, t, d = q.shape
        q32 = q.detach().to("cpu", torch.float32)
        k32 = k.detach().to("cpu", torch.float32)
        v32 = v.detach().to("cpu", torch.float32)
        if t == 0:
            return torch.zeros(b, self.n_heads, 0, d, dtype=torch.float32)
        if self._k is None:
            new_k, new_v = k32.clone(), v32.clone()
        else:
            new_k = torch.cat([self._k, k32], dim=2)
            new_v = torch.cat([self._v, v32], dim=2)
        P = self.length
        self._k, self._v = new_k, new_v
        self.length = P + t
        g = self.n_heads // self.n_kv_heads
        K = new_k.repeat_interleave(g, dim=1)
        V = new_v.repeat_interleave(g, dim=1)
        scores = (q32 @ K.transpose(-1, -2)) / math.sqrt(d)
        L = P + t
        qpos = torch.arange(P, P + t).unsqueeze(1)
        kpos = torch.arange(L).unsqueeze(0)
        mask = kpos <= qpos
        scores = scores.masked_fill(~mask, float("-inf"))
        return torch.softmax(scores, dim=-1) @ V

    def keys(self):
        if self._k is None:
            return torch.zeros(0, self.n_kv_heads, 0, self.head_dim, dtype=torch.float32)
        return self._k.clone()

    def values(self):
        if self._v is None:
            return torch.zeros(0, self.n_kv_heads, 0, self.head_dim, dtype=torch.float32)
        return self._v.clone()
