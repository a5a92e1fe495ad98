"""Wrong solution: works out the residual in place on target_probs, which for float64 rows is the caller's own tensor."""

from __future__ import annotations

import math

import torch


def verify_row(draft_tokens: list[int], q: torch.Tensor, p: torch.Tensor, gen: torch.Generator) -> list[int]:
    emitted: list[int] = []
    for i, x in enumerate(draft_tokens):
        u = float(torch.rand((), generator=gen, dtype=torch.float64))
        px = float(p[i, x])
        qx = float(q[i, x])
        ratio = min(1.0, px / qx)
        if u < ratio:
            emitted.append(x)
            continue
        residual = p[i].sub_(q[i]).clamp_(min=0.0)  # no extra allocation for huge vocabularies
        y = int(torch.multinomial(residual, 1, generator=gen))
        emitted.append(y)
        return emitted
    bonus = int(torch.multinomial(p[len(draft_tokens)], 1, generator=gen))
    emitted.append(bonus)
    return emitted


def _validate(draft_tokens, draft_probs, target_probs):
    for name, t in (("draft_tokens", draft_tokens), ("draft_probs", draft_probs), ("target_probs", target_probs)):
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{name} must be a tensor")
    if draft_tokens.dim() != 2:
        raise ValueError("draft_tokens must be 2-D")
    if draft_tokens.is_floating_point() or draft_tokens.is_complex() or draft_tokens.dtype == torch.bool:
        raise ValueError("draft_tokens must hold integers")
    n, k = draft_tokens.shape
    if draft_probs.dim() != 3 or tuple(draft_probs.shape[:2]) != (n, k):
        raise ValueError("draft_probs must be [n, k, vocab]")
    vocab = draft_probs.shape[2]
    if tuple(target_probs.shape) != (n, k + 1, vocab):
        raise ValueError("target_probs must be [n, k+1, vocab]")
    if vocab == 0:
        raise ValueError("vocab must be positive")
    if draft_tokens.numel() > 0:
        if int(draft_tokens.min()) < 0 or int(draft_tokens.max()) >= vocab:
            raise ValueError("draft token id out of range")
    return n, k


def verify_draft(draft_tokens: torch.Tensor, draft_probs: torch.Tensor, target_probs: torch.Tensor, seed: int) -> torch.Tensor:
    """Rows are independent sequences. Returns [n, k+1] int64, padded with -1."""
    n, k = _validate(draft_tokens, draft_probs, target_probs)
    gen = torch.Generator().manual_seed(seed)
    out = torch.full((n, k + 1), -1, dtype=torch.int64)
    tokens = draft_tokens.to(torch.int64)
    for row in range(n):
        q = draft_probs[row].to(torch.float64)
        p = target_probs[row].to(torch.float64)
        emitted = verify_row(tokens[row].tolist(), q, p, gen)
        out[row, : len(emitted)] = torch.tensor(emitted, dtype=torch.int64)
    return out


def _check_alpha_k(alpha, k):
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise ValueError("alpha must be a number")
    if math.isnan(alpha) or alpha < 0 or alpha > 1:
        raise ValueError("alpha must be in [0, 1]")
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError("k must be a non-negative int")


def expected_tokens_per_pass(alpha: float, k: int) -> float:
    _check_alpha_k(alpha, k)
    if alpha == 1:
        return float(k + 1)
    if alpha == 0:
        return 1.0
    a = float(alpha)
    # (1 - a^(k+1)) / (1 - a), without cancellation near a = 1
    return float(math.expm1((k + 1) * math.log1p(a - 1.0)) / (a - 1.0))
