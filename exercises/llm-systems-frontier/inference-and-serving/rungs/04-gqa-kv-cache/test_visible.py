"""Visible tests: decoding with the cache matches attention recomputed from scratch."""

import math

import torch
from grading import assert_close

ATOL = 1e-5  # float32 outputs against a float64 recomputation
RTOL = 1e-5


def full_causal_attention(q, k, v):
    """Attention over the whole sequence at once, in float64: the ground truth."""
    q, k, v = q.double(), k.double(), v.double()
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    t = q.shape[2]
    mask = torch.ones(t, t, dtype=torch.bool).tril()
    scores = scores.masked_fill(~mask, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v).float()


def random_qkv(seed, batch, n_heads, n_kv_heads, tokens, head_dim):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, n_heads, tokens, head_dim, generator=gen)
    k = torch.randn(batch, n_kv_heads, tokens, head_dim, generator=gen)
    v = torch.randn(batch, n_kv_heads, tokens, head_dim, generator=gen)
    return q, k, v


def test_mha_token_by_token_matches_full_attention(solution):
    q, k, v = random_qkv(0, 1, 4, 4, 6, 8)
    cache = solution.KVCache(4, 4, 8)
    outs = [cache.attend(q[:, :, t : t + 1], k[:, :, t : t + 1], v[:, :, t : t + 1]) for t in range(6)]
    assert_close(
        torch.cat(outs, dim=2),
        full_causal_attention(q, k, v),
        rtol=RTOL,
        atol=ATOL,
        what="MHA (4 heads), 6 tokens decoded one at a time",
    )


def test_gqa_prefill_then_decode(solution):
    q, k, v = random_qkv(1, 1, 4, 2, 5, 8)
    cache = solution.KVCache(4, 2, 8)
    prefill = cache.attend(q[:, :, :3], k[:, :, :3], v[:, :, :3])
    step3 = cache.attend(q[:, :, 3:4], k[:, :, 3:4], v[:, :, 3:4])
    step4 = cache.attend(q[:, :, 4:5], k[:, :, 4:5], v[:, :, 4:5])
    expected = full_causal_attention(q, k, v)
    assert_close(prefill, expected[:, :, :3], rtol=RTOL, atol=ATOL, what="GQA (4 heads, 2 KV heads): prefill of 3 tokens")
    assert_close(
        torch.cat([step3, step4], dim=2),
        expected[:, :, 3:],
        rtol=RTOL,
        atol=ATOL,
        what="GQA (4 heads, 2 KV heads): decode steps 3 and 4",
    )
