"""Reference solution: speculative decoding verification."""

from __future__ import annotations

import math

import torch

# Elements of the [rows, vocab] weight matrix handed to one torch.multinomial call: keeps memory flat for huge vocabularies.
_CHUNK_ELEMENTS = 1 << 22


def expected_tokens_per_pass(alpha: float, k: int) -> float:
    """Expected tokens emitted per target pass with k drafts, each accepted with probability alpha."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be a non-negative int, got {k!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or math.isnan(alpha) or not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be a number in [0, 1], got {alpha!r}")
    # 1 + alpha + ... + alpha^k: the closed form (1 - alpha^(k+1)) / (1 - alpha) without its 0/0 at alpha = 1.
    return float(math.fsum(float(alpha) ** i for i in range(k + 1)))


def _check_shapes(draft_tokens: torch.Tensor, draft_probs: torch.Tensor, target_probs: torch.Tensor) -> tuple[int, int, int]:
    if draft_tokens.dim() != 2:
        raise ValueError(f"draft_tokens must be [n, k], got shape {tuple(draft_tokens.shape)}")
    if draft_tokens.is_floating_point() or draft_tokens.is_complex() or draft_tokens.dtype == torch.bool:
        raise ValueError(f"draft_tokens must hold integer token ids, got {draft_tokens.dtype}")
    n, k = draft_tokens.shape
    if draft_probs.dim() != 3 or tuple(draft_probs.shape[:2]) != (n, k):
        raise ValueError(f"draft_probs must be [{n}, {k}, vocab], got {tuple(draft_probs.shape)}")
    vocab = draft_probs.shape[2]
    if vocab == 0 or tuple(target_probs.shape) != (n, k + 1, vocab):
        raise ValueError(f"target_probs must be [{n}, {k + 1}, {vocab}] with vocab >= 1, got {tuple(target_probs.shape)}")
    if draft_tokens.numel() and (int(draft_tokens.min()) < 0 or int(draft_tokens.max()) >= vocab):
        raise ValueError(f"draft token ids must lie in [0, {vocab})")
    return n, k, vocab


def verify_draft(draft_tokens: torch.Tensor, draft_probs: torch.Tensor, target_probs: torch.Tensor, seed: int) -> torch.Tensor:
    """Accept/reject each row's draft tokens; returns [n, k+1] emitted tokens, padded with -1."""
    n, k, vocab = _check_shapes(draft_tokens, draft_probs, target_probs)
    gen = torch.Generator().manual_seed(seed)
    out = torch.full((n, k + 1), -1, dtype=torch.int64)
    if n == 0:
        return out
    x = draft_tokens.to(torch.int64)
    # Half-precision rows are used as given, only widened to float64 (after picking
    # what is needed: a [n, k+1, vocab] tensor can be large).
    p_x = target_probs[:, :k].gather(2, x[..., None])[..., 0].to(torch.float64)
    q_x = draft_probs.gather(2, x[..., None])[..., 0].to(torch.float64)

    # One uniform per draft: accept x_i when u_i < min(1, p_i(x_i) / q_i(x_i)).
    u = torch.rand((n, k), generator=gen, dtype=torch.float64)
    rejected = ~(u < torch.clamp(p_x / q_x, max=1.0))
    # The first rejection ends the row; k when every draft is accepted.
    first = torch.full((n,), k)
    if k:
        first = torch.where(rejected.any(dim=1), rejected.to(torch.int64).argmax(dim=1), first)
    kept = torch.arange(k)[None, :] < first[:, None]
    out[:, :k] = torch.where(kept, x, out[:, :k])

    # At position `first`: a replacement from norm(max(0, p - q)), or the bonus token from p_{k+1}.
    rows = torch.arange(n)
    chunk = max(1, _CHUNK_ELEMENTS // vocab)
    for start in range(0, n, chunk):
        r, f = rows[start : start + chunk], first[start : start + chunk]
        weights = target_probs[r, f].to(torch.float64)
        was_rejected = f < k
        if bool(was_rejected.any()):
            rr, ff = r[was_rejected], f[was_rejected]
            weights[was_rejected] = torch.clamp(weights[was_rejected] - draft_probs[rr, ff].to(torch.float64), min=0.0)
        out[r, f] = torch.multinomial(weights, 1, generator=gen)[:, 0]
    return out
