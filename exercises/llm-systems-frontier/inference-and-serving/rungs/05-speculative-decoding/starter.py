"""Speculative decoding: verify a block of draft tokens.

Fill in verify_row and expected_tokens_per_pass. verify_draft (given) runs
verify_row on every row with one seeded generator.
"""

from __future__ import annotations

import torch


def verify_row(draft_tokens: list[int], q: torch.Tensor, p: torch.Tensor, gen: torch.Generator) -> list[int]:
    """Verify one row of k drafts and return the emitted tokens (1 to k+1 of them).

    draft_tokens: the k draft token ids.
    q: [k, vocab] draft-model probabilities at each draft position.
    p: [k+1, vocab] target-model probabilities (one extra row for the bonus token).
    gen: draw every random number from it, e.g.
        torch.rand((), generator=gen) or torch.multinomial(w, 1, generator=gen).
    """
    raise NotImplementedError


def verify_draft(draft_tokens: torch.Tensor, draft_probs: torch.Tensor, target_probs: torch.Tensor, seed: int) -> torch.Tensor:
    """Rows are independent sequences. Returns [n, k+1] int64, padded with -1."""
    # TODO: raise ValueError when the shapes do not match (see the instructions).
    n, k = draft_tokens.shape
    gen = torch.Generator().manual_seed(seed)
    out = torch.full((n, k + 1), -1, dtype=torch.int64)
    for row in range(n):
        emitted = verify_row(draft_tokens[row].tolist(), draft_probs[row], target_probs[row], gen)
        out[row, : len(emitted)] = torch.tensor(emitted, dtype=torch.int64)
    return out


def expected_tokens_per_pass(alpha: float, k: int) -> float:
    """Expected tokens emitted per target pass with k drafts, each accepted with probability alpha."""
    raise NotImplementedError
