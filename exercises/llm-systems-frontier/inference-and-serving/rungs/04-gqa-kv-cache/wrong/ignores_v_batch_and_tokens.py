"""Wrong solution: compares q with k for batch size and token count, but never v with them."""

from __future__ import annotations

import math

import torch


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


class KVCache:
    """Caches K and V of past tokens for one layer; attends with grouped query heads."""

    def __init__(self, n_heads: int, n_kv_heads: int, head_dim: int) -> None:
        self.n_heads = _positive_int(n_heads, "n_heads")
        self.n_kv_heads = _positive_int(n_kv_heads, "n_kv_heads")
        self.head_dim = _positive_int(head_dim, "head_dim")
        if n_heads % n_kv_heads != 0:
            raise ValueError(f"n_kv_heads={n_kv_heads} does not divide n_heads={n_heads}")
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self._k: torch.Tensor | None = None  # [batch, n_kv_heads, length, head_dim]
        self._v: torch.Tensor | None = None
        self.length = 0

    def _check(self, name: str, x: torch.Tensor, heads: int) -> None:
        if x.dim() != 4 or x.shape[1] != heads or x.shape[3] != self.head_dim:
            raise ValueError(f"{name} must have shape [batch, {heads}, tokens, {self.head_dim}], got {tuple(x.shape)}")

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Append k, v of T new tokens, then attend from their queries; returns [batch, n_heads, T, head_dim]."""
        self._check("q", q, self.n_heads)
        self._check("k", k, self.n_kv_heads)
        self._check("v", v, self.n_kv_heads)
        if q.shape[0] != k.shape[0] or q.shape[2] != k.shape[2]:
            raise ValueError("q and k must share batch size and token count")
        if self._k is not None and q.shape[0] != self._k.shape[0]:
            raise ValueError(f"batch size changed from {self._k.shape[0]} to {q.shape[0]}")
        q, k, v = (x.to(self.device, torch.float32) for x in (q, k, v))

        # Only the new tokens' K and V are computed; the past ones are reused.
        self._k = k if self._k is None else torch.cat([self._k, k], dim=2)
        self._v = v if self._v is None else torch.cat([self._v, v], dim=2)
        batch, _, new, d = q.shape
        total = self._k.shape[2]
        self.length = total

        # Query head h belongs to group h // (n_heads // n_kv_heads): the K/V
        # head is shared by consecutive query heads, without copying K/V.
        group = self.n_heads // self.n_kv_heads
        qg = q.reshape(batch, self.n_kv_heads, group, new, d)
        scores = torch.einsum("bkgtd,bksd->bkgts", qg, self._k) / math.sqrt(d)
        # New token i sits at position total - new + i and sees positions <= its own.
        q_pos = torch.arange(total - new, total, device=self.device)[:, None]
        k_pos = torch.arange(total, device=self.device)[None, :]
        scores = scores.masked_fill(k_pos > q_pos, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = torch.einsum("bkgts,bksd->bkgtd", weights, self._v)
        return out.reshape(batch, self.n_heads, new, d).cpu()

    def keys(self) -> torch.Tensor:
        """The cached keys, [batch, n_kv_heads, length, head_dim] (CPU)."""
        if self._k is None:
            return torch.empty(0, self.n_kv_heads, 0, self.head_dim)
        return self._k.cpu()

    def values(self) -> torch.Tensor:
        """The cached values, [batch, n_kv_heads, length, head_dim] (CPU)."""
        if self._v is None:
            return torch.empty(0, self.n_kv_heads, 0, self.head_dim)
        return self._v.cpu()
