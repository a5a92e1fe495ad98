"""Speculative decoding: verify a block of draft tokens."""

from __future__ import annotations

import math

import torch


def verify_row(draft_tokens: list[int], q: torch.Tensor, p: torch.Tensor, gen: torch.Generator) -> list[int]:
    emitted: list[int] = []
    for i, x in enumerate(draft_tokens):
        u = torch.rand((), generator=gen, dtype=torch.float64)
        ratio = min(1.0, float(p[i, x]) / float(q[i, x]))
        if u < ratio:
            emitted.append(x)
            continue
        residual = torch.clamp(p[i] - q[i], min=0)
        y = int(torch.multinomial(residual, 1, generator=gen))
        emitted.append(y)
        return emitted
    emitted.append(int(torch.multinomial(p[len(draft_tokens)], 1, generator=gen)))
    return emitted


def _check(draft_tokens, draft_probs, target_probs):
    if not isinstance(draft_tokens, torch.Tensor) or draft_tokens.dim() != 2:
        raise ValueError("draft_tokens must be a 2-D tensor")
    if draft_tokens.dtype not in (torch.int32, torch.int64):
        raise ValueError("draft_tokens must hold integers")
    n, k = draft_tokens.shape
    if draft_probs.dim() != 3 or draft_probs.shape[0] != n or draft_probs.shape[1] != k:
        raise ValueError("draft_probs must be [n, k, vocab]")
    vocab = draft_probs.shape[2]
    if vocab == 0:
        raise ValueError("vocab must be positive")
    if tuple(target_probs.shape) != (n, k + 1, vocab):
        raise ValueError("target_probs must be [n, k+1, vocab]")
    if draft_tokens.numel() and (int(draft_tokens.min()) < 0 or int(draft_tokens.max()) >= vocab):
        raise ValueError("draft token id out of range")
    return n, k, vocab


def verify_draft(draft_tokens: torch.Tensor, draft_probs: torch.Tensor, target_probs: torch.Tensor, seed: int) -> torch.Tensor:
    n, k, vocab = _check(draft_tokens, draft_probs, target_probs)
    q_all = draft_probs.to(torch.float64)
    p_all = target_probs.to(torch.float64)
    gen = torch.Generator().manual_seed(seed)
    out = torch.full((n, k + 1), -1, dtype=torch.int64)
    for row in range(n):
        emitted = verify_row(draft_tokens[row].tolist(), q_all[row], p_all[row], gen)
        out[row, : len(emitted)] = torch.tensor(emitted, dtype=torch.int64)
    return out


def expected_tokens_per_pass(alpha: float, k: int) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise ValueError("alpha must be a number")
    if not (0 <= alpha <= 1):
        raise ValueError("alpha must be in [0, 1]")
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError("k must be a non-negative int")
    alpha = float(alpha)
    if alpha == 1.0:
        return float(k + 1)
    # sum of a geometric series; log1p/expm1 keep precision near alpha = 1
    if alpha == 0.0:
        return 1.0
    return float(-math.expm1((k + 1) * math.log(alpha)) / -math.expm1(math.log(alpha)) if alpha > 0.5 else (1 - alpha ** (k + 1)) / (1 - alpha))
