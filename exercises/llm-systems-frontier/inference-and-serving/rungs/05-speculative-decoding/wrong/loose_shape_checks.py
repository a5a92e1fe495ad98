"""Wrong solution: checks only that the probability tensors are big enough to index, not that their shapes match exactly."""

import torch


def verify_row(draft_tokens, q, p, gen):
    emitted = []
    for i, x in enumerate(draft_tokens):
        u = float(torch.rand((), generator=gen))
        if u < min(1.0, float(p[i, x]) / float(q[i, x])):
            emitted.append(x)
            continue
        residual = torch.clamp(p[i].double() - q[i].double(), min=0.0)
        emitted.append(int(torch.multinomial(residual, 1, generator=gen)))
        return emitted
    emitted.append(int(torch.multinomial(p[len(draft_tokens)].double(), 1, generator=gen)))
    return emitted


def verify_draft(draft_tokens, draft_probs, target_probs, seed):
    if draft_tokens.dim() != 2 or draft_tokens.is_floating_point() or draft_tokens.dtype == torch.bool:
        raise ValueError("draft_tokens must be an [n, k] tensor of integer ids")
    n, k = draft_tokens.shape
    # Enough rows and positions to index, and room for every id: "at least", not "exactly".
    if draft_probs.shape[0] < n or draft_probs.shape[1] < k or target_probs.shape[0] < n or target_probs.shape[1] < k + 1:
        raise ValueError("probability tensors too small")
    vocab = draft_probs.shape[-1]
    if vocab == 0 or target_probs.shape[-1] < vocab:
        raise ValueError("vocabulary too small")
    if draft_tokens.numel() and (int(draft_tokens.min()) < 0 or int(draft_tokens.max()) >= vocab):
        raise ValueError("draft token id outside the vocabulary")
    gen = torch.Generator().manual_seed(seed)
    out = torch.full((n, k + 1), -1, dtype=torch.int64)
    for row in range(n):
        emitted = verify_row(draft_tokens[row].tolist(), draft_probs[row], target_probs[row], gen)
        out[row, : len(emitted)] = torch.tensor(emitted, dtype=torch.int64)
    return out


def expected_tokens_per_pass(alpha, k):
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError("k must be a non-negative int")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha != alpha or not 0 <= alpha <= 1:
        raise ValueError("alpha must be in [0, 1]")
    return float(sum(float(alpha) ** i for i in range(k + 1)))
