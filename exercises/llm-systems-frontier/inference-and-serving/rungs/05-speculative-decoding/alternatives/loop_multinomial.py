"""Correct, written from the instructions alone: one row after another and
one draft after another, as the rules read, with torch.multinomial for
each replacement or bonus token; probabilities read as Python floats, and
the closed form for alpha < 1 (the sum only at alpha == 1)."""

from __future__ import annotations

import torch


def verify_draft(draft_tokens: torch.Tensor, draft_probs: torch.Tensor, target_probs: torch.Tensor, seed: int) -> torch.Tensor:
    if draft_tokens.dim() != 2:
        raise ValueError("draft_tokens must be 2-D")
    if draft_tokens.dtype.is_floating_point or draft_tokens.dtype is torch.bool:
        raise ValueError("draft_tokens must hold integers")
    n, k = draft_tokens.shape
    if draft_probs.dim() != 3 or draft_probs.shape[0] != n or draft_probs.shape[1] != k:
        raise ValueError("draft_probs must be [n, k, vocab]")
    vocab = draft_probs.shape[2]
    if vocab == 0:
        raise ValueError("vocab is 0")
    if target_probs.dim() != 3 or list(target_probs.shape) != [n, k + 1, vocab]:
        raise ValueError("target_probs must be [n, k + 1, vocab]")
    ids = draft_tokens.tolist()
    if any(not 0 <= t < vocab for row in ids for t in row):
        raise ValueError("draft token out of range")

    gen = torch.Generator().manual_seed(seed)
    out = torch.full((n, k + 1), -1, dtype=torch.int64)
    for r in range(n):
        q = draft_probs[r].double()
        p = target_probs[r].double()
        emitted: list[int] = []
        for i, x in enumerate(ids[r]):
            u = float(torch.rand((), generator=gen, dtype=torch.float64))
            ratio = float(p[i, x]) / float(q[i, x])
            if u < min(1.0, ratio):
                emitted.append(x)
                continue
            residual = (p[i] - q[i]).clamp(min=0)
            emitted.append(int(torch.multinomial(residual, 1, generator=gen)))
            break
        else:
            emitted.append(int(torch.multinomial(p[k], 1, generator=gen)))
        out[r, : len(emitted)] = torch.tensor(emitted, dtype=torch.int64)
    return out


def expected_tokens_per_pass(alpha: float, k: int) -> float:
    if type(alpha) not in (int, float) or alpha != alpha or alpha < 0 or alpha > 1:
        raise ValueError("alpha must be an int or float in [0, 1]")
    if type(k) is not int or k < 0:
        raise ValueError("k must be a non-negative int")
    if alpha == 1:
        return float(k + 1)
    return (1.0 - alpha ** (k + 1)) / (1.0 - alpha)
