"""Hidden tests: MQA, grouping, cache contents, chunked prefill, batches, state and bad input."""

import math

import pytest
import torch
from grading import assert_close, assert_int, assert_tensor

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


def run_in_chunks(cache, q, k, v, chunks):
    outs, start = [], 0
    for size in chunks:
        end = start + size
        outs.append(cache.attend(q[:, :, start:end], k[:, :, start:end], v[:, :, start:end]))
        start = end
    return torch.cat(outs, dim=2)


def test_mqa_single_kv_head_decode(solution):
    q, k, v = random_qkv(101, 2, 8, 1, 7, 16)
    cache = solution.KVCache(8, 1, 16)
    got = run_in_chunks(cache, q, k, v, [1] * 7)
    assert_close(got, full_causal_attention(q, k, v), rtol=RTOL, atol=ATOL, what="MQA (8 heads, 1 KV head), batch 2, 7 decode steps")


def test_gqa_groups_are_consecutive_query_heads(solution):
    # 6 query heads, 2 KV heads: heads 0-2 share KV head 0, heads 3-5 share KV head 1.
    q, k, v = random_qkv(202, 1, 6, 2, 5, 4)
    v[:, 1] += 10.0  # make the two KV heads easy to tell apart
    cache = solution.KVCache(6, 2, 4)
    got = run_in_chunks(cache, q, k, v, [2, 1, 1, 1])
    assert_close(got, full_causal_attention(q, k, v), rtol=RTOL, atol=ATOL, what="GQA, 6 heads in 2 groups of 3")


def test_cache_stores_kv_heads_not_query_heads(solution):
    q, k, v = random_qkv(303, 2, 8, 2, 5, 4)
    cache = solution.KVCache(8, 2, 4)
    run_in_chunks(cache, q, k, v, [3, 1, 1])
    keys, values = cache.keys(), cache.values()
    assert_tensor(keys, shape=(2, 2, 5, 4), what="cache.keys() after 5 tokens (batch 2, 2 KV heads, head_dim 4)")
    assert_tensor(values, shape=(2, 2, 5, 4), what="cache.values() after 5 tokens (batch 2, 2 KV heads, head_dim 4)")
    assert_close(keys.float(), k, what="cached keys (the k tensors appended, in order)")
    assert_close(values.float(), v, what="cached values (the v tensors appended, in order)")


def test_chunked_prefill_after_decode_steps(solution):
    q, k, v = random_qkv(404, 1, 4, 2, 10, 8)
    cache = solution.KVCache(4, 2, 8)
    got = run_in_chunks(cache, q, k, v, [4, 1, 1, 3, 1])
    assert_close(
        got,
        full_causal_attention(q, k, v),
        rtol=RTOL,
        atol=ATOL,
        what="prefill 4, decode 2, a chunk of 3 more tokens, decode 1",
    )


def test_batch_rows_do_not_mix(solution):
    q, k, v = random_qkv(505, 3, 4, 4, 4, 8)
    k[1] *= 3.0
    v[2] -= 5.0
    cache = solution.KVCache(4, 4, 8)
    got = run_in_chunks(cache, q, k, v, [2, 1, 1])
    assert_close(got, full_causal_attention(q, k, v), rtol=RTOL, atol=ATOL, what="batch of 3 different sequences")


def test_length_counts_cached_tokens(solution):
    q, k, v = random_qkv(606, 1, 2, 1, 6, 4)
    cache = solution.KVCache(2, 1, 4)
    assert_int(cache.length, 0, "cache.length before any token", "tokens")
    cache.attend(q[:, :, :4], k[:, :, :4], v[:, :, :4])
    assert_int(cache.length, 4, "cache.length after a 4-token prefill", "tokens")
    cache.attend(q[:, :, 4:5], k[:, :, 4:5], v[:, :, 4:5])
    cache.attend(q[:, :, 5:6], k[:, :, 5:6], v[:, :, 5:6])
    assert_int(cache.length, 6, "cache.length after 2 decode steps", "tokens")


def test_two_caches_are_independent(solution):
    q1, k1, v1 = random_qkv(707, 1, 4, 2, 4, 8)
    q2, k2, v2 = random_qkv(708, 1, 4, 2, 3, 8)
    first = solution.KVCache(4, 2, 8)
    second = solution.KVCache(4, 2, 8)
    outs1, outs2 = [], []
    for t in range(3):
        outs1.append(first.attend(q1[:, :, t : t + 1], k1[:, :, t : t + 1], v1[:, :, t : t + 1]))
        outs2.append(second.attend(q2[:, :, t : t + 1], k2[:, :, t : t + 1], v2[:, :, t : t + 1]))
    outs1.append(first.attend(q1[:, :, 3:4], k1[:, :, 3:4], v1[:, :, 3:4]))
    assert_close(torch.cat(outs1, dim=2), full_causal_attention(q1, k1, v1), rtol=RTOL, atol=ATOL, what="first of two caches used in turn")
    assert_close(torch.cat(outs2, dim=2), full_causal_attention(q2, k2, v2), rtol=RTOL, atol=ATOL, what="second of two caches used in turn")
    assert_int(second.length, 3, "second cache's length", "tokens")


def test_long_decode_stays_accurate(solution):
    q, k, v = random_qkv(808, 1, 4, 1, 48, 32)
    cache = solution.KVCache(4, 1, 32)
    got = run_in_chunks(cache, q, k, v, [8] + [1] * 40)
    assert_close(got, full_causal_attention(q, k, v), rtol=RTOL, atol=ATOL, what="prefill 8 then 40 decode steps, head_dim 32")


def test_kv_heads_must_divide_heads(solution):
    for n_heads, n_kv_heads in ((6, 4), (8, 3), (4, 8)):
        with pytest.raises(ValueError):
            solution.KVCache(n_heads, n_kv_heads, 16)


def test_non_positive_sizes_raise(solution):
    for args in ((0, 1, 16), (8, 0, 16), (8, 2, 0), (-8, 2, 16)):
        with pytest.raises(ValueError):
            solution.KVCache(*args)
