"""Correct, written from the instructions alone: all rows at once. One
tensor of uniforms [n, k] is drawn up front, the first rejection of each
row is found with cumprod, and each row's replacement or bonus token is
sampled by inverse CDF (cumsum + searchsorted on one more uniform), which
needs no torch.multinomial at all."""

from __future__ import annotations

import math

import torch

FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def _check(draft_tokens: torch.Tensor, draft_probs: torch.Tensor, target_probs: torch.Tensor) -> None:
    if draft_tokens.dim() != 2 or draft_tokens.dtype.is_floating_point or draft_tokens.dtype == torch.bool or draft_tokens.is_complex():
        raise ValueError("draft_tokens must be a 2-D integer tensor")
    n, k = draft_tokens.shape
    if draft_probs.dim() != 3 or tuple(draft_probs.shape[:2]) != (n, k):
        raise ValueError("draft_probs must be [n, k, vocab]")
    vocab = draft_probs.shape[2]
    if tuple(target_probs.shape) != (n, k + 1, vocab):
        raise ValueError("target_probs must be [n, k + 1, vocab]")
    if vocab == 0:
        raise ValueError("empty vocabulary")
    if draft_tokens.numel() and (int(draft_tokens.min()) < 0 or int(draft_tokens.max()) >= vocab):
        raise ValueError("draft token out of range")


def _sample(weights: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """One index per row of [m, vocab] non-negative weights, by inverse CDF."""
    cdf = weights.cumsum(dim=1)
    total = cdf[:, -1:]
    u = torch.rand((weights.shape[0], 1), generator=gen, dtype=torch.float64) * total
    idx = torch.searchsorted(cdf, u, right=True).squeeze(1)
    # Never land on a zero-weight token: clamp and step back over trailing zeros.
    idx = idx.clamp(max=weights.shape[1] - 1)
    positive = weights > 0
    last_positive = torch.where(positive, torch.arange(weights.shape[1]), -1).cummax(dim=1).values
    return last_positive.gather(1, idx.unsqueeze(1)).squeeze(1)


def verify_draft(draft_tokens: torch.Tensor, draft_probs: torch.Tensor, target_probs: torch.Tensor, seed: int) -> torch.Tensor:
    _check(draft_tokens, draft_probs, target_probs)
    n, k = draft_tokens.shape
    gen = torch.Generator().manual_seed(seed)
    out = torch.full((n, k + 1), -1, dtype=torch.int64)
    if n == 0:
        return out
    tokens = draft_tokens.to(torch.int64)
    q = draft_probs.to(torch.float64)
    p = target_probs.to(torch.float64)
    u = torch.rand((n, k), generator=gen, dtype=torch.float64)
    q_x = q.gather(2, tokens.unsqueeze(2)).squeeze(2)
    p_x = p[:, :k].gather(2, tokens.unsqueeze(2)).squeeze(2)
    accepted = u < torch.clamp(p_x / q_x, max=1.0)
    run = accepted.to(torch.int64).cumprod(dim=1)
    n_accepted = run.sum(dim=1)  # drafts kept per row
    rows = torch.arange(n)
    keep = torch.arange(k).unsqueeze(0) < n_accepted.unsqueeze(1)
    out[:, :k] = torch.where(keep, tokens, out[:, :k])
    rejected = n_accepted < k
    position = n_accepted.clamp(max=k)
    last = p[rows, position]  # p at the rejected position, or the bonus row
    if k:
        residual = torch.clamp(p[rows, position.clamp(max=k - 1)] - q[rows, position.clamp(max=k - 1)], min=0.0)
        weights = torch.where(rejected.unsqueeze(1), residual, last)
    else:
        weights = last
    out[rows, position] = _sample(weights, gen)
    return out


def expected_tokens_per_pass(alpha: float, k: int) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or math.isnan(alpha) or not 0 <= alpha <= 1:
        raise ValueError("alpha must be a number in [0, 1]")
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError("k must be a non-negative int")
    return float(math.fsum(float(alpha) ** i for i in range(k + 1)))
