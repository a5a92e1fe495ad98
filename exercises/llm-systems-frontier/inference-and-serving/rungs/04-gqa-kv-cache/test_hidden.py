"""Hidden tests: MQA, grouping, cache contents, chunked prefill, batches, state and bad input."""

import math
import random

import pytest
import reference
import torch
from grading import assert_close, assert_int, assert_tensor, job_seed

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


def _tolerance(q, k, v):
    """(rtol, atol): 1e-5, widened by what float32 rounding of large scores can cost."""
    group = q.shape[1] // k.shape[1]
    scores = q.double() @ k.double().repeat_interleave(group, dim=1).transpose(-1, -2) / math.sqrt(q.shape[-1])
    top_score = float(scores.abs().max()) if scores.numel() else 0.0
    top_value = float(v.double().abs().max()) if v.numel() else 0.0
    return RTOL, ATOL * max(1.0, top_value) + 2e-6 * top_score * top_value


def test_large_scores_do_not_overflow(solution):
    q, k, v = random_qkv(909, 1, 4, 2, 6, 16)
    q, k = q * 8.0, k * 8.0  # scores in the hundreds: exp() of them overflows float32
    cache = solution.KVCache(4, 2, 16)
    got = run_in_chunks(cache, q, k, v, [3, 1, 2])
    assert not bool(torch.isnan(got).any()), "attention output contains NaN for large scores"
    rtol, atol = _tolerance(q, k, v)
    assert_close(got, full_causal_attention(q, k, v), rtol=rtol, atol=atol, what="scores in the hundreds (q and k scaled by 8)")


def test_half_precision_inputs_are_computed_in_float32(solution):
    for dtype in (torch.float16, torch.bfloat16, torch.float64):
        q, k, v = (x.to(dtype) for x in random_qkv(1010, 2, 4, 2, 5, 8))
        cache = solution.KVCache(4, 2, 8)
        got = run_in_chunks(cache, q, k, v, [3, 1, 1])
        assert_tensor(got, shape=(2, 4, 5, 8), dtype=torch.float32, what=f"attention output for {dtype} inputs")
        assert_close(got, full_causal_attention(q, k, v), rtol=RTOL, atol=ATOL, what=f"attention over {dtype} inputs, computed in float32")
        keys = cache.keys()
        assert_tensor(keys, shape=(2, 2, 5, 8), dtype=torch.float32, what=f"cache.keys() after {dtype} inputs")
        assert_close(keys, k.to(torch.float32), what=f"cached keys of {dtype} inputs")


def test_mixed_input_dtypes_in_one_call(solution):
    q, k, v = random_qkv(1111, 1, 2, 1, 4, 8)
    q, k = q.to(torch.bfloat16), k.to(torch.float16)
    cache = solution.KVCache(2, 1, 8)
    got = run_in_chunks(cache, q, k, v, [2, 2])
    assert_close(got, full_causal_attention(q, k, v), rtol=RTOL, atol=ATOL, what="q in bfloat16, k in float16, v in float32")


def test_zero_new_tokens_change_nothing(solution):
    q, k, v = random_qkv(1212, 2, 4, 2, 4, 8)
    cache = solution.KVCache(4, 2, 8)
    empty = cache.attend(q[:, :, :0], k[:, :, :0], v[:, :, :0])
    assert_tensor(empty, shape=(2, 4, 0, 8), what="result of attending to 0 new tokens on an empty cache")
    assert_int(cache.length, 0, "cache.length after 0 new tokens", "tokens")
    assert_tensor(cache.keys(), shape=(2, 2, 0, 8), dtype=torch.float32, what="cache.keys() after a first call with 0 tokens (it fixed the batch size)")
    assert_tensor(cache.values(), shape=(2, 2, 0, 8), dtype=torch.float32, what="cache.values() after a first call with 0 tokens")
    q3, k3, v3 = random_qkv(1213, 3, 4, 2, 2, 8)
    with pytest.raises(ValueError):
        cache.attend(q3, k3, v3)  # batch 3 after a first call of batch 2, even one with no tokens
    got = [cache.attend(q[:, :, :3], k[:, :, :3], v[:, :, :3])]
    empty = cache.attend(q[:, :, 3:3], k[:, :, 3:3], v[:, :, 3:3])
    assert_tensor(empty, shape=(2, 4, 0, 8), what="result of attending to 0 new tokens after a prefill")
    assert_int(cache.length, 3, "cache.length after a prefill then 0 new tokens", "tokens")
    got.append(cache.attend(q[:, :, 3:], k[:, :, 3:], v[:, :, 3:]))
    assert_close(torch.cat(got, dim=2), full_causal_attention(q, k, v), rtol=RTOL, atol=ATOL, what="attention around calls with 0 new tokens")


def test_empty_cache_contents(solution):
    cache = solution.KVCache(6, 3, 5)
    keys, values = cache.keys(), cache.values()
    assert_tensor(keys, shape=(0, 3, 0, 5), dtype=torch.float32, what="cache.keys() before any token")
    assert_tensor(values, shape=(0, 3, 0, 5), dtype=torch.float32, what="cache.values() before any token")


def test_smallest_shapes(solution):
    q, k, v = random_qkv(1313, 1, 1, 1, 3, 1)
    cache = solution.KVCache(1, 1, 1)
    got = run_in_chunks(cache, q, k, v, [1, 1, 1])
    assert_close(got, full_causal_attention(q, k, v), rtol=RTOL, atol=ATOL, what="one head of size 1, batch 1, three decode steps")
    assert_int(cache.length, 3, "cache.length", "tokens")


def _bad_calls(q, k, v):
    """Calls that break one shape rule each, for a layer of 4 heads, 2 KV heads, head_dim 8, from batch-2 tensors."""
    t, two = slice(2, 3), slice(2, 4)
    q3, k3, v3 = (torch.cat([x, x[:1]]) for x in (q, k, v))  # batch 3
    return [
        (q[:, :2, t], k[:, :, t], v[:, :, t]),  # q with n_kv_heads heads
        (q[:, :, t], q[:, :, t], v[:, :, t]),  # k with n_heads heads
        (q[:, :, t], k[:, :, t], q[:, :, t]),  # v with n_heads heads
        (q[:, :, t, :4], k[:, :, t, :4], v[:, :, t, :4]),  # head_dim 4 instead of 8
        (torch.cat([q, q], 3)[:, :, t], torch.cat([k, k], 3)[:, :, t], torch.cat([v, v], 3)[:, :, t]),  # head_dim 16
        (q[:, :, two], k[:, :, t], v[:, :, t]),  # q has 2 tokens, k and v 1
        (q[:, :, t], k[:, :, two], v[:, :, two]),  # q has 1 token, k and v 2
        (q[:, :, t], k[:, :, t], v[:, :, two]),  # v has 2 tokens
        (q[:, :, two], k[:, :, two], v[:, :, t]),  # v has 1 token, q and k 2
        (q[:, :, t], k[:, :, two], v[:, :, t]),  # k has 2 tokens
        (q[0, :, t], k[0, :, t], v[0, :, t]),  # 3-D tensors, heads first
        (q[:, :, 2], k[:, :, 2], v[:, :, 2]),  # 3-D tensors [batch, heads, head_dim]: the heads look right
        (q[:, :, t, :, None], k[:, :, t, :, None], v[:, :, t, :, None]),  # 5-D tensors, heads and head_dim in place
        (q[:, :, t], k[:1, :, t], v[:1, :, t]),  # k and v with a smaller batch than q
        (q[:, :, t], k3[:, :, t], v3[:, :, t]),  # k and v with a larger batch than q
        (q[:, :, t], k[:, :, t], v[:1, :, t]),  # v alone with a smaller batch
        (q[:, :, t], k[:, :, t], v3[:, :, t]),  # v alone with a larger batch
        (q[:, :, t], k[:1, :, t], v[:, :, t]),  # k alone with a smaller batch
        (q[:, :, t], k[:, :, t], v[:, :, t, :4]),  # v alone with head_dim 4
        (q[:, :, t], k[:, :, t], torch.cat([v, v], 3)[:, :, t]),  # v alone with head_dim 16
        (q[:, :, t], k[:, :, t, :4], v[:, :, t]),  # k alone with head_dim 4
        # No new token does not excuse a bad shape.
        (q[:, :2, :0], k[:, :, :0], v[:, :, :0]),  # q with n_kv_heads heads, 0 tokens
        (q[:, :, :0, :4], k[:, :, :0, :4], v[:, :, :0, :4]),  # head_dim 4, 0 tokens
        (q[:, :, :0], k[:, :, :0], v[:, :, :0, :4]),  # v alone with head_dim 4, 0 tokens
        (q[:, :, :0], k[:1, :, :0], v[:1, :, :0]),  # k and v with a smaller batch, 0 tokens
    ]


def test_bad_calls_raise_and_leave_the_cache_alone(solution):
    q, k, v = random_qkv(1414, 2, 4, 2, 4, 8)
    fresh = solution.KVCache(4, 2, 8)
    for args in _bad_calls(q, k, v):
        with pytest.raises(ValueError):
            fresh.attend(*args)
    assert_int(fresh.length, 0, "cache.length of an empty cache after refused calls", "tokens")
    assert_close(fresh.attend(q, k, v), full_causal_attention(q, k, v), rtol=RTOL, atol=ATOL, what="attention of an empty cache after refused calls")
    cache = solution.KVCache(4, 2, 8)
    cache.attend(q[:, :, :2], k[:, :, :2], v[:, :, :2])
    t = slice(2, 3)
    q3, k3, v3 = (torch.cat([x, x[:1]]) for x in (q, k, v))
    batch_changed = [
        (q[:1, :, t], k[:1, :, t], v[:1, :, t]),  # batch 1 after batch 2
        (q3[:, :, t], k3[:, :, t], v3[:, :, t]),  # batch 3 after batch 2
        (q[:1, :, :0], k[:1, :, :0], v[:1, :, :0]),  # batch 1 after batch 2, 0 tokens
    ]
    for args in [*batch_changed, *_bad_calls(q, k, v)]:
        with pytest.raises(ValueError):
            cache.attend(*args)
    assert_int(cache.length, 2, "cache.length after refused calls", "tokens")
    assert_close(cache.keys(), k[:, :, :2], what="cached keys after refused calls")
    got = cache.attend(q[:, :, 2:], k[:, :, 2:], v[:, :, 2:])
    expected = full_causal_attention(q, k, v)[:, :, 2:]
    assert_close(got, expected, rtol=RTOL, atol=ATOL, what="attention after refused calls")


def test_sizes_of_another_type_raise(solution):
    for args in ((8.0, 2, 16), (8, 2.0, 16), (8, 2, 16.0), (True, 1, 4), (8, 2, "16")):
        with pytest.raises(ValueError):
            solution.KVCache(*args)


# ---------------------------------------------------------------------------
# Differential tests: generated call sequences against a from-scratch
# recomputation in float64, cache contents against the reference.
# ---------------------------------------------------------------------------

DTYPES = [torch.float32, torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _random_case(rng, gen):
    n_kv = rng.choice([1, 1, 2, 3, 4])
    n_heads = n_kv * rng.choice([1, 2, 3, 4])
    head_dim = rng.choice([1, 2, 4, 8, 16, 32])
    batch = rng.choice([1, 1, 2, 3])
    chunks = [rng.choice([0, 1, 1, 1, 2, 3, 5]) for _ in range(rng.randrange(1, 7))]
    if rng.random() < 0.5:
        chunks[0] = rng.randrange(1, 9)  # a prefill
    tokens = sum(chunks)
    scale = rng.choice([1.0, 1.0, 0.01, 4.0, 10.0])
    q = torch.randn(batch, n_heads, tokens, head_dim, generator=gen) * scale
    k = torch.randn(batch, n_kv, tokens, head_dim, generator=gen) * scale
    v = torch.randn(batch, n_kv, tokens, head_dim, generator=gen) * rng.choice([1.0, 1.0, 100.0])
    return (n_heads, n_kv, head_dim), chunks, q, k, v


def _play(cache, chunks, q, k, v, dtypes):
    outs, start = [], 0
    for size, (qd, kd, vd) in zip(chunks, dtypes, strict=True):
        end = start + size
        outs.append(cache.attend(q[:, :, start:end].to(qd), k[:, :, start:end].to(kd), v[:, :, start:end].to(vd)))
        start = end
    return outs


def test_generated_call_sequences_match_full_attention(solution):
    rng = random.Random(job_seed())
    gen = torch.Generator().manual_seed(job_seed())
    for case in range(30):
        sizes, chunks, q, k, v = _random_case(rng, gen)
        other_sizes, other_chunks, q2, k2, v2 = _random_case(rng, gen)
        dtypes = [tuple(rng.choice(DTYPES) for _ in range(3)) for _ in chunks]
        # What the learner's cache receives, rounded to those dtypes: the truth is computed from it.
        q_in = torch.cat([q[:, :, sum(chunks[:i]) : sum(chunks[: i + 1])].to(d[0]).double() for i, d in enumerate(dtypes)], dim=2)
        k_in = torch.cat([k[:, :, sum(chunks[:i]) : sum(chunks[: i + 1])].to(d[1]).double() for i, d in enumerate(dtypes)], dim=2)
        v_in = torch.cat([v[:, :, sum(chunks[:i]) : sum(chunks[: i + 1])].to(d[2]).double() for i, d in enumerate(dtypes)], dim=2)
        label = f"case {case}: {sizes[0]} heads, {sizes[1]} KV heads, head_dim {sizes[2]}, batch {q.shape[0]}, chunks {chunks}"
        cache, other = solution.KVCache(*sizes), solution.KVCache(*other_sizes)
        ref = reference.KVCache(*sizes)
        # A second cache used in between, like another layer.
        _play(other, other_chunks[:1], q2, k2, v2, [(torch.float32,) * 3])
        outs = _play(cache, chunks, q, k, v, dtypes)
        _play(ref, chunks, q, k, v, dtypes)
        rtol, atol = _tolerance(q_in, k_in, v_in)
        truth = full_causal_attention(q_in, k_in, v_in)
        start = 0
        for i, (size, out) in enumerate(zip(chunks, outs, strict=True)):
            assert_close(out, truth[:, :, start : start + size], rtol=rtol, atol=atol, what=f"{label}: output of call {i} ({size} new tokens)")
            start += size
        assert_int(cache.length, ref.length, f"{label}: cache.length", "tokens")
        assert_close(cache.keys(), ref.keys(), what=f"{label}: cache.keys()")
        assert_close(cache.values(), ref.values(), what=f"{label}: cache.values()")
        assert_int(other.length, other_chunks[0], f"{label}: length of a second cache used in between", "tokens")
