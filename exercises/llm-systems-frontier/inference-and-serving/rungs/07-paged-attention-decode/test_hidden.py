"""Hidden tests: block tables, partial blocks, padding, heads, scale, precision, bad input; on a GPU, fp16/bf16 and memory."""

import itertools
import math
import random
import types

import pytest
import reference
import torch
from grading import assert_close, assert_tensor, job_seed

TOL = {"rtol": 1e-5, "atol": 1e-5}  # float32 results against a float64 recomputation
GPU_ONLY = pytest.mark.skipif(not torch.cuda.is_available(), reason="GPU-only check: no GPU in this sandbox")


def contiguous_attention(query, key_cache, value_cache, block_tables, context_lens, scale=None):
    """The ground truth, in float64: walk each sequence's tokens one by one through its block table."""
    query, key_cache, value_cache = query.cpu(), key_cache.cpu(), value_cache.cpu()
    num_seqs, num_heads, head_dim = query.shape
    block_size, num_kv_heads = key_cache.shape[1], key_cache.shape[2]
    group = num_heads // num_kv_heads
    scale = 1 / math.sqrt(head_dim) if scale is None else scale
    out = torch.zeros(num_seqs, num_heads, head_dim, dtype=torch.float64)
    for seq in range(num_seqs):
        length = int(context_lens[seq])
        slots = [(int(block_tables[seq, t // block_size]), t % block_size) for t in range(length)]
        keys = torch.stack([key_cache[b, s] for b, s in slots]).double()
        values = torch.stack([value_cache[b, s] for b, s in slots]).double()
        for head in range(num_heads):
            kv = head // group
            weights = torch.softmax(keys[:, kv] @ query[seq, head].double() * scale, dim=0)
            out[seq, head] = weights @ values[:, kv]
    return out


def random_case(seed, num_blocks, block_size, num_heads, num_kv_heads, head_dim, tables, lengths, dtype=torch.float32, device="cpu"):
    gen = torch.Generator().manual_seed(seed)
    query = torch.randn(len(lengths), num_heads, head_dim, generator=gen).to(device, dtype)
    key_cache = torch.randn(num_blocks, block_size, num_kv_heads, head_dim, generator=gen).to(device, dtype)
    value_cache = torch.randn(num_blocks, block_size, num_kv_heads, head_dim, generator=gen).to(device, dtype)
    return query, key_cache, value_cache, torch.tensor(tables, dtype=torch.int32), torch.tensor(lengths, dtype=torch.int32)


def check(solution, case, what, scale=None, **tolerance):
    got = solution.paged_decode(*case) if scale is None else solution.paged_decode(*case, scale=scale)
    expected = contiguous_attention(*case, scale=scale).to(case[0].dtype)
    assert_close(got, expected, what=what, **(tolerance or TOL))


def test_partial_last_block_reads_only_filled_slots(solution):
    query, key_cache, value_cache, tables, lengths = random_case(11, 4, 8, 2, 2, 8, [[3, 1], [0, 2]], [11, 3])
    # Slots past each sequence's length hold stale tokens of a finished sequence.
    key_cache[1, 3:] = 40.0
    value_cache[1, 3:] = -90.0
    key_cache[0, 3:] = 25.0
    value_cache[0, 3:] = 70.0
    check(solution, (query, key_cache, value_cache, tables, lengths), "stale slots after the last token")


def test_blocks_in_any_order_and_a_shared_prefix(solution):
    # Sequences 0 and 1 share their first block (a common prompt), then diverge.
    case = random_case(12, 8, 4, 4, 2, 16, [[6, 2, 7], [6, 0, 5], [4, 3, 1]], [12, 9, 10])
    check(solution, case, "three sequences, shuffled blocks, one shared")


def test_table_padding_is_never_read(solution):
    case = list(random_case(13, 5, 4, 2, 1, 8, [[4, 0, 0], [2, 3, 0]], [3, 6]))
    case[3][0, 1:] = -1
    case[3][1, 2] = 1_000_000
    check(solution, tuple(case), "block tables padded with -1 and a huge id past the used blocks")


def test_unread_slots_may_hold_nan_and_inf(solution):
    # Cache memory nobody wrote (torch.empty, a freed block) may hold anything. Padding
    # entries that name a real block, and the stale slots of a last block, are not to be
    # read: reading them and masking the scores afterwards still multiplies a weight of 0
    # by NaN or inf, which is NaN.
    query, key_cache, value_cache, tables, lengths = random_case(15, 6, 4, 4, 2, 8, [[2, 5, 0], [1, 3, 4]], [6, 5])
    for cache in (key_cache, value_cache):
        cache[0] = float("nan")  # named only by sequence 0's padding
        cache[4] = float("inf")  # named only by sequence 1's padding
        cache[5, 2:] = float("nan")  # sequence 0's last block: tokens 4-5 in slots 0-1
        cache[3, 1:] = float("-inf")  # sequence 1's last block: token 4 in slot 0
    check(solution, (query, key_cache, value_cache, tables, lengths), "NaN and inf in padding blocks and stale slots")


def test_exactly_full_blocks_and_one_token_more(solution):
    check(solution, random_case(14, 6, 4, 2, 2, 8, [[1, 4], [5, 0], [3, 2]], [8, 4, 5]), "lengths 8, 4 and 5 at block size 4")


def test_grouped_and_multi_query_heads(solution):
    check(solution, random_case(15, 4, 4, 6, 2, 8, [[3, 0], [1, 2]], [6, 7]), "6 query heads on 2 KV heads")
    check(solution, random_case(16, 4, 4, 4, 1, 8, [[2, 1]], [5]), "4 query heads on 1 KV head")
    check(solution, random_case(17, 4, 2, 8, 4, 4, [[3, 1, 0]], [5]), "8 query heads on 4 KV heads")


def test_scale_default_and_given(solution):
    case = random_case(18, 4, 4, 2, 2, 32, [[2, 3]], [7])
    check(solution, case, "scale None (1 / sqrt(32))")
    check(solution, case, "scale 0.5", scale=0.5)
    check(solution, case, "scale 1 given as an int", scale=1)
    check(solution, case, "scale 0 (every token weighs the same: it is not the default)", scale=0.0)
    check(solution, case, "scale 0 given as an int", scale=0)
    check(solution, case, "a negative scale", scale=-0.25)


def test_large_scores_stay_finite(solution):
    query, key_cache, value_cache, tables, lengths = random_case(19, 3, 4, 2, 2, 16, [[0, 2]], [6])
    case = (query * 30, key_cache * 30, value_cache, tables, lengths)
    check(solution, case, "scores in the hundreds")


def test_half_precision_keeps_the_query_dtype_and_accuracy(solution):
    for dtype, tol in ((torch.float16, 1e-3), (torch.bfloat16, 8e-3)):
        query, key_cache, value_cache, tables, lengths = random_case(20, 40, 8, 4, 2, 32, [list(range(39, -1, -1))], [317], dtype=dtype)
        case = (query * 3, key_cache * 3, value_cache, tables, lengths)
        got = solution.paged_decode(*case)
        assert_tensor(got, shape=(1, 4, 32), dtype=dtype, what=f"output for {dtype} inputs")
        expected = contiguous_attention(*case).to(dtype)
        assert_close(got.double(), expected.double(), rtol=tol, atol=tol, what=f"{dtype} inputs, 317 tokens (compute in float32)")


def test_query_and_cache_in_different_dtypes(solution):
    # The result takes the query's dtype, whatever the cache holds.
    for query_dtype, cache_dtype, tol in ((torch.float32, torch.float16, 1e-5), (torch.float32, torch.bfloat16, 1e-5), (torch.float16, torch.float32, 1e-3)):
        query, key_cache, value_cache, tables, lengths = random_case(26, 6, 4, 4, 2, 16, [[5, 1, 3], [0, 2, 4]], [10, 12])
        case = (query.to(query_dtype), key_cache.to(cache_dtype), value_cache.to(cache_dtype), tables, lengths)
        got = solution.paged_decode(*case)
        what = f"a {query_dtype} query on a {cache_dtype} cache"
        assert_tensor(got, shape=(2, 4, 16), dtype=query_dtype, what=f"output of {what}")
        expected = contiguous_attention(*case).to(query_dtype)
        assert_close(got.double(), expected.double(), rtol=tol, atol=tol, what=what)


def test_half_precision_with_large_scores(solution):
    # Scores in the tens: rounding q * scale, or a float32 cache, to the query's half dtype before the float32
    # arithmetic moves the softmax weights by far more than the result's own rounding.
    combos = (
        (torch.float16, torch.float16, 1e-3), (torch.bfloat16, torch.bfloat16, 8e-3),
        (torch.float16, torch.float32, 1e-3), (torch.bfloat16, torch.float32, 8e-3),
    )
    for (query_dtype, cache_dtype, tol), seed, scale in itertools.product(combos, (27, 28, 29), (None, 0.15)):
        query, key_cache, value_cache, tables, lengths = random_case(seed, 12, 8, 4, 2, 64, [[11, 3, 7, 0, 5], [2, 9, 4, 10, 1]], [37, 40])
        case = ((query * 4).to(query_dtype), (key_cache * 4).to(cache_dtype), value_cache.to(cache_dtype), tables, lengths)
        got = solution.paged_decode(*case) if scale is None else solution.paged_decode(*case, scale=scale)
        what = f"a {query_dtype} query on a {cache_dtype} cache, scores in the tens, scale {scale} (case {seed})"
        assert_tensor(got, shape=(2, 4, 64), dtype=query_dtype, what=f"output of {what}")
        expected = contiguous_attention(*case, scale=scale).to(query_dtype)
        assert_close(got.double(), expected.double(), rtol=tol, atol=tol, what=f"{what} (compute in float32)")


def test_tables_and_lengths_in_other_integer_dtypes(solution):
    for dtype in (torch.int16, torch.int8, torch.uint8):
        q, k, v, tables, lengths = random_case(27, 6, 4, 2, 1, 8, [[5, 0, 2], [3, 4, 1]], [9, 11])
        check(solution, (q, k, v, tables.to(dtype), lengths.to(dtype)), f"{dtype} block tables and context lengths")


def test_one_token_in_one_block(solution):
    check(solution, random_case(21, 1, 1, 1, 1, 1, [[0]], [1]), "one token, block size 1, head_dim 1")


def _raises(solution, case, what, **kwargs):
    with pytest.raises(ValueError):
        solution.paged_decode(*case, **kwargs)
    with pytest.raises(ValueError):
        reference.paged_decode(*case, **kwargs)  # the test itself is sound


def test_shapes_that_do_not_fit_raise(solution):
    q, k, v, tables, lengths = random_case(22, 4, 4, 4, 2, 8, [[1, 2]], [6])
    _raises(solution, (q[0], k, v, tables, lengths), "query without its sequence dimension")
    _raises(solution, (q[:, :, None], k, v, tables, lengths), "query with an extra dimension")
    two_rows = torch.tensor([[1, 2], [3, 0]], dtype=torch.int32), torch.tensor([6, 5], dtype=torch.int32)
    _raises(solution, (q[0, :2].clone(), k, v, *two_rows), "a 2-dimensional query for two sequences")
    _raises(solution, (q, k[0], v[0], tables, lengths), "caches without the block dimension")
    _raises(solution, (q, k[..., None], v[..., None], tables, lengths), "caches with an extra dimension")
    _raises(solution, (q, k, v[:, :, :1], tables, lengths), "value cache of another shape")
    _raises(solution, (q, k, torch.cat([v, v]), tables, lengths), "value cache with more blocks than the key cache")
    _raises(solution, (q, k[..., :4], v[..., :4], tables, lengths), "cache head_dim differs from the query's")
    _raises(solution, (q, torch.cat([k, k], -1), torch.cat([v, v], -1), tables, lengths), "cache head_dim twice the query's")
    _raises(solution, (q[:, :3], k, v, tables, lengths), "3 query heads on 2 KV heads")
    _raises(solution, (q, k, v, tables[0], lengths), "block table without its sequence dimension")
    _raises(solution, (q, k, v, tables[0, :1], lengths), "a 1-dimensional block table of one entry")
    _raises(solution, (q, k, v, tables[:, :, None], lengths), "a 3-dimensional block table")
    _raises(solution, (q, k, v, torch.cat([tables, tables]), lengths), "one block table too many")
    _raises(solution, (q, k, v, tables, torch.tensor([6, 6], dtype=torch.int32)), "one context length too many")
    _raises(solution, (q, k, v, tables, lengths[0]), "a context length without its sequence dimension")
    two = torch.cat([q, q])
    _raises(solution, (two, k, v, tables, torch.tensor([6, 6], dtype=torch.int32)), "two sequences, one block table")
    _raises(solution, (two, k, v, torch.cat([tables, tables]), lengths), "two sequences, one context length")


def test_context_lengths_outside_the_table_raise(solution):
    q, k, v, tables, _ = random_case(23, 4, 4, 2, 2, 8, [[1, 2]], [6])
    for bad in (0, -3, 9):
        _raises(solution, (q, k, v, tables, torch.tensor([bad], dtype=torch.int32)), f"context length {bad}")
    check(solution, (q, k, v, tables, torch.tensor([8], dtype=torch.int32)), "context length filling the whole table")


def test_block_ids_outside_the_cache_raise(solution):
    q, k, v, _, lengths = random_case(24, 4, 4, 2, 2, 8, [[1, 2]], [6])
    for table in ([[1, 4]], [[-1, 2]], [[3, 7]]):
        _raises(solution, (q, k, v, torch.tensor(table, dtype=torch.int32), lengths), f"block table {table}")
    check(solution, (q, k, v, torch.tensor([[3, 0]], dtype=torch.int32), lengths), "the first and last blocks of the cache")


def test_float_tables_and_lengths_raise(solution):
    q, k, v, tables, lengths = random_case(25, 4, 4, 2, 2, 8, [[1, 2]], [6])
    _raises(solution, (q, k, v, tables.float(), lengths), "a float block table")
    _raises(solution, (q, k, v, tables, lengths.float()), "float context lengths")
    check(solution, (q, k, v, tables.long(), lengths.long()), "int64 tables and lengths")


def _generated_case(rng, seed):
    block_size = rng.choice([1, 2, 3, 4, 8])
    num_kv_heads = rng.choice([1, 2, 3])
    num_heads = num_kv_heads * rng.choice([1, 2, 4])
    head_dim = rng.choice([1, 4, 8])
    num_seqs = rng.randint(1, 4)
    max_blocks = rng.randint(1, 4)
    num_blocks = rng.randint(max_blocks, max_blocks * num_seqs + 2)
    lengths = [rng.randint(1, max_blocks * block_size) for _ in range(num_seqs)]
    tables = [rng.sample(range(num_blocks), max_blocks) for _ in range(num_seqs)]
    for seq, length in enumerate(lengths):
        for slot in range(-(-length // block_size), max_blocks):
            tables[seq][slot] = rng.choice([-1, 0, num_blocks + 5])
    case = list(random_case(seed, num_blocks, block_size, num_heads, num_kv_heads, head_dim, tables, lengths))
    if rng.random() < 0.2:  # now and then, a mistake a caller could make
        where = rng.randrange(num_seqs)
        mistake = rng.choice(["long", "block", "zero"])
        if mistake == "long":
            case[4][where] = max_blocks * block_size + rng.randint(1, 3)
        elif mistake == "block":
            case[3][where, 0] = rng.choice([-2, num_blocks])
        else:
            case[4][where] = 0
    scale = rng.choice([None, None, 0.25, 2.0])
    return tuple(case), scale


def _outcome(function, case, scale):
    try:
        return function(*case, scale=scale)
    except ValueError:
        return "ValueError"


def test_generated_cases_match_the_reference(solution):
    rng = random.Random(job_seed() * 7919 + 5)
    for index in range(60):
        case, scale = _generated_case(rng, rng.randrange(1 << 30))
        expected = _outcome(reference.paged_decode, case, scale)
        got = _outcome(solution.paged_decode, case, scale)
        what = f"generated case {index}: lengths {case[4].tolist()}, block size {case[1].shape[1]}, heads {case[0].shape[1]}/{case[1].shape[2]}, scale {scale}"
        if isinstance(expected, str) or isinstance(got, str):
            assert got == expected, f"{what}: got {got if isinstance(got, str) else 'a result'}, expected {expected if isinstance(expected, str) else 'a result'}"
        else:
            assert_close(got, expected, what=what, **TOL)


# --- GPU-only checks: skipped where the sandbox has no GPU (the result says so) ---


@GPU_ONLY
def test_gpu_half_precision_on_the_device(solution):
    tables = [list(range(63, 31, -1)), list(range(0, 32))]
    for dtype, tol in ((torch.float16, 2e-3), (torch.bfloat16, 1.6e-2)):
        case = random_case(31, 64, 16, 8, 2, 64, tables, [500, 257], dtype=dtype, device="cuda")
        got = solution.paged_decode(*case)
        assert_tensor(got, shape=(2, 8, 64), dtype=dtype, what=f"output for {dtype} inputs on the GPU")
        expected = contiguous_attention(*case).to(dtype)
        assert_close(got.double(), expected.double(), rtol=tol, atol=tol, what=f"{dtype} on the GPU, 500 and 257 tokens")


@GPU_ONLY
def test_gpu_never_copies_the_whole_cache(solution):
    # 32 sequences of 768 tokens fill a 12 MiB fp16 cache (K and V each; the
    # grader's channel carries at most 64 MB per call). Gathering one sequence at
    # a time needs about 1/32 of it; a contiguous copy of every sequence's K and
    # V (or a float32 copy of the cache) needs as much again or more.
    num_seqs, blocks_per_seq, block_size, kv_heads, head_dim = 32, 48, 16, 4, 64
    order = torch.randperm(num_seqs * blocks_per_seq, generator=torch.Generator().manual_seed(32))
    tables = order.reshape(num_seqs, blocks_per_seq).tolist()
    case = random_case(32, num_seqs * blocks_per_seq, block_size, 8, kv_heads, head_dim, tables, [blocks_per_seq * block_size] * num_seqs,
                       dtype=torch.float16, device="cuda")
    cache_bytes = 2 * case[1].numel() * case[1].element_size()
    try:
        cuda = solution.torch.cuda
    except AttributeError:
        pytest.fail("the GPU memory check reads torch.cuda through your module: keep `import torch` at its top")
    cuda.synchronize()
    cuda.empty_cache()
    cuda.reset_peak_memory_stats()
    before = cuda.memory_allocated()
    got = solution.paged_decode(*case)
    peak = cuda.max_memory_allocated() - before
    # Through the grader's channel the inputs reach your process's GPU during the
    # call, so they count; a module imported in this process (scripts/gpu-check.sh)
    # got them already allocated. Either way, half the cache is the room to spare.
    inputs = 0 if isinstance(solution, types.ModuleType) else cache_bytes
    budget = inputs + cache_bytes // 2
    assert peak <= budget, (
        f"the call's peak GPU memory was {peak / 2**20:.0f} MiB for a {cache_bytes / 2**20:.0f} MiB cache: "
        f"over the {budget / 2**20:.0f} MiB allowed, so the whole cache was copied (gather one sequence's blocks at a time)"
    )
    assert_tensor(got, shape=(num_seqs, 8, head_dim), dtype=torch.float16, what="output of the memory check")
