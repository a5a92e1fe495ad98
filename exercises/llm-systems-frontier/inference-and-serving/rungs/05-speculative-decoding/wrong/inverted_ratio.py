"""Wrong solution: accepts with probability min(1, q/p)."""

from __future__ import annotations

import torch


def expected_tokens_per_pass(alpha: float, k: int) -> float:
    """Expected tokens emitted per target pass with k drafts, each accepted with probability alpha."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be a non-negative int, got {k!r}")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must lie in [0, 1], got {alpha!r}")
    if alpha == 1.0:
        return float(k + 1)  # every draft accepted, plus the bonus token
    return (1.0 - alpha ** (k + 1)) / (1.0 - alpha)


def _check_shapes(draft_tokens: torch.Tensor, draft_probs: torch.Tensor, target_probs: torch.Tensor) -> tuple[int, int, int]:
    if draft_tokens.dim() != 2:
        raise ValueError(f"draft_tokens must be [n, k], got shape {tuple(draft_tokens.shape)}")
    n, k = draft_tokens.shape
    if draft_probs.dim() != 3 or tuple(draft_probs.shape[:2]) != (n, k):
        raise ValueError(f"draft_probs must be [{n}, {k}, vocab], got {tuple(draft_probs.shape)}")
    vocab = draft_probs.shape[2]
    if tuple(target_probs.shape) != (n, k + 1, vocab):
        raise ValueError(f"target_probs must be [{n}, {k + 1}, {vocab}], got {tuple(target_probs.shape)}")
    return n, k, vocab


def verify_draft(draft_tokens: torch.Tensor, draft_probs: torch.Tensor, target_probs: torch.Tensor, seed: int) -> torch.Tensor:
    """Accept/reject each row's draft tokens; returns [n, k+1] emitted tokens, padded with -1."""
    n, k, _ = _check_shapes(draft_tokens, draft_probs, target_probs)
    gen = torch.Generator().manual_seed(seed)
    p_all = target_probs.to(torch.float64)
    q_all = draft_probs.to(torch.float64)
    tokens = draft_tokens.tolist()
    out = torch.full((n, k + 1), -1, dtype=torch.int64)
    for row in range(n):
        for i in range(k):
            x = tokens[row][i]
            p, q = float(p_all[row, i, x]), float(q_all[row, i, x])
            u = float(torch.rand((), generator=gen, dtype=torch.float64))
            if u < min(1.0, q / p if p > 0 else float('inf')):
                out[row, i] = x  # accepted: the target agrees often enough
                continue
            # Rejected: resample from the part of p that q under-covers.
            residual = torch.clamp(p_all[row, i] - q_all[row, i], min=0.0)
            out[row, i] = int(torch.multinomial(residual, 1, generator=gen))
            break
        else:
            # Every draft accepted: the target's pass also gives one more token.
            out[row, k] = int(torch.multinomial(p_all[row, k], 1, generator=gen))
    return out
