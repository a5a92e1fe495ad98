"""Wrong solution: draws one uniform per row and tests every draft against it."""
from __future__ import annotations
import torch

def verify_row(draft_tokens, q, p, gen):
    emitted = []
    u = float(torch.rand((), generator=gen))  # one draw decides the whole row
    for i, x in enumerate(draft_tokens):
        px, qx = float(p[i, x]), float(q[i, x])
        if u < min(1.0, px / qx):
            emitted.append(x)
            continue
        residual = torch.clamp(p[i].double() - q[i].double(), min=0.0)
        emitted.append(int(torch.multinomial(residual, 1, generator=gen)))
        return emitted
    emitted.append(int(torch.multinomial(p[len(draft_tokens)].double(), 1, generator=gen)))
    return emitted

def verify_draft(draft_tokens, draft_probs, target_probs, seed):
    if draft_tokens.dim() != 2 or draft_tokens.is_floating_point():
        raise ValueError("draft_tokens must be [n, k] ids")
    n, k = draft_tokens.shape
    if draft_probs.dim() != 3 or tuple(draft_probs.shape[:2]) != (n, k):
        raise ValueError("draft_probs shape")
    vocab = draft_probs.shape[2]
    if tuple(target_probs.shape) != (n, k + 1, vocab):
        raise ValueError("target_probs shape")
    if draft_tokens.numel() and (draft_tokens.min() < 0 or draft_tokens.max() >= vocab):
        raise ValueError("token ids")
    gen = torch.Generator().manual_seed(seed)
    out = torch.full((n, k + 1), -1, dtype=torch.int64)
    for row in range(n):
        emitted = verify_row(draft_tokens[row].tolist(), draft_probs[row], target_probs[row], gen)
        out[row, : len(emitted)] = torch.tensor(emitted, dtype=torch.int64)
    return out

def expected_tokens_per_pass(alpha, k):
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError("k")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1:
        raise ValueError("alpha")
    if alpha == 1:
        return float(k + 1)
    return (1 - alpha ** (k + 1)) / (1 - alpha)
