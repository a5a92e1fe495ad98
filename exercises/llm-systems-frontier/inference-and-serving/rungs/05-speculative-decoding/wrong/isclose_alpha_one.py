"""Wrong solution: returns k + 1 whenever math.isclose(alpha, 1), not only at alpha = 1."""
from __future__ import annotations

import math

import torch


def _validate(draft_tokens, draft_probs, target_probs):
    if not isinstance(draft_tokens, torch.Tensor) or draft_tokens.dim() != 2:
        raise ValueError("draft_tokens must be 2-D")
    if draft_tokens.dtype.is_floating_point or draft_tokens.dtype == torch.bool or draft_tokens.dtype.is_complex:
        raise ValueError("draft_tokens must hold integers")
    n, k = draft_tokens.shape
    if draft_probs.dim() != 3 or draft_probs.shape[0] != n or draft_probs.shape[1] != k:
        raise ValueError("draft_probs must be [n, k, vocab]")
    vocab = draft_probs.shape[2]
    if target_probs.dim() != 3 or tuple(target_probs.shape) != (n, k + 1, vocab):
        raise ValueError("target_probs must be [n, k+1, vocab]")
    if vocab == 0:
        raise ValueError("vocab is 0")
    if draft_tokens.numel() and (bool((draft_tokens < 0).any()) or bool((draft_tokens >= vocab).any())):
        raise ValueError("draft token out of range")
    return n, k, vocab


def verify_row(draft_tokens, q, p, gen):
    out = []
    for i, x in enumerate(draft_tokens):
        u = torch.rand((), generator=gen, dtype=torch.float64)
        px = float(p[i, x])
        qx = float(q[i, x])
        if float(u) < min(1.0, px / qx):
            out.append(x)
            continue
        resid = torch.clamp(p[i] - q[i], min=0)
        y = int(torch.multinomial(resid, 1, generator=gen))
        out.append(y)
        return out
    out.append(int(torch.multinomial(p[len(draft_tokens)], 1, generator=gen)))
    return out


def verify_draft(draft_tokens, draft_probs, target_probs, seed):
    n, k, vocab = _validate(draft_tokens, draft_probs, target_probs)
    gen = torch.Generator().manual_seed(seed)
    out = torch.full((n, k + 1), -1, dtype=torch.int64)
    dp = draft_probs.detach().cpu().double()
    tp = target_probs.detach().cpu().double()
    toks = draft_tokens.detach().cpu().to(torch.int64)
    for row in range(n):
        emitted = verify_row(toks[row].tolist(), dp[row], tp[row], gen)
        out[row, : len(emitted)] = torch.tensor(emitted, dtype=torch.int64)
    return out


def expected_tokens_per_pass(alpha, k):
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise ValueError("alpha must be a number")
    if math.isnan(alpha) or alpha < 0 or alpha > 1:
        raise ValueError("alpha outside [0, 1]")
    if type(k) is not int or k < 0:
        raise ValueError("k must be a non-negative int")
    if math.isclose(alpha, 1):
        return float(k + 1)
    if alpha == 0:
        return 1.0
    return float(-math.expm1((k + 1) * math.log(alpha)) / (1 - alpha))
