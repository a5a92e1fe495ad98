"""Correct, written from the instructions alone: each row's drafts walked in
order in Python over plain floats, as the rules read (the uniforms and the
acceptance ratios of all rows are read out as lists first), and where each
row stops, its replacement or bonus token, sampled for all rows in one
torch.multinomial over the stacked residual or bonus rows. The closed form
(1 - alpha^(k+1)) / (1 - alpha) below alpha = 1, the sum only at 1."""

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
    out = [[-1] * (k + 1) for _ in range(n)]
    if n == 0:
        return torch.tensor(out, dtype=torch.int64).reshape(0, k + 1)
    # Every uniform up front (the rules leave the order of draws to us), one per draft.
    uniforms = torch.rand((n, k), generator=gen, dtype=torch.float64).tolist()
    if k:
        index = draft_tokens.long().unsqueeze(2)
        p_x = target_probs[:, :k].gather(2, index).squeeze(2).double().tolist()
        q_x = draft_probs.gather(2, index).squeeze(2).double().tolist()
    # Walk each row's drafts in order over plain floats; `stop` is where its sampled token goes.
    stops: list[int] = []
    for r in range(n):
        stop = k
        for i in range(k):
            if uniforms[r][i] < min(1.0, p_x[r][i] / q_x[r][i]):
                out[r][i] = ids[r][i]
            else:
                stop = i
                break
        stops.append(stop)
    # One torch.multinomial over the stacked rows: the residual where a row stopped on a
    # rejection, the bonus row p_{k+1} where it accepted everything.
    rows = torch.arange(n)
    where = torch.tensor(stops, dtype=torch.int64)
    weights = target_probs[rows, where].double()
    rejected = where < k
    if bool(rejected.any()):
        weights[rejected] = (weights[rejected] - draft_probs[rows[rejected], where[rejected]].double()).clamp(min=0)
    for r, token in enumerate(torch.multinomial(weights, 1, generator=gen).squeeze(1).tolist()):
        out[r][stops[r]] = token
    return torch.tensor(out, dtype=torch.int64)


def expected_tokens_per_pass(alpha: float, k: int) -> float:
    if type(alpha) not in (int, float) or alpha != alpha or alpha < 0 or alpha > 1:
        raise ValueError("alpha must be an int or float in [0, 1]")
    if type(k) is not int or k < 0:
        raise ValueError("k must be a non-negative int")
    if alpha == 1:
        return float(k + 1)
    return (1.0 - alpha ** (k + 1)) / (1.0 - alpha)
