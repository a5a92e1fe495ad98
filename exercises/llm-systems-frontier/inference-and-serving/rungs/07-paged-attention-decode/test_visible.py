"""Visible tests: paged decode matches attention over each sequence's tokens laid out in order."""

import math

import torch
from grading import assert_close


def contiguous_attention(query, key_cache, value_cache, block_tables, context_lens, scale=None):
    """The ground truth, in float64: walk each sequence's tokens one by one through its block table."""
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


def random_case(seed, num_blocks, block_size, num_heads, num_kv_heads, head_dim, tables, lengths):
    gen = torch.Generator().manual_seed(seed)
    query = torch.randn(len(lengths), num_heads, head_dim, generator=gen)
    key_cache = torch.randn(num_blocks, block_size, num_kv_heads, head_dim, generator=gen)
    value_cache = torch.randn(num_blocks, block_size, num_kv_heads, head_dim, generator=gen)
    return query, key_cache, value_cache, torch.tensor(tables, dtype=torch.int32), torch.tensor(lengths, dtype=torch.int32)


def test_one_sequence_in_one_block(solution):
    case = random_case(1, 4, 8, 2, 2, 16, [[2]], [5])
    got = solution.paged_decode(*case)
    assert_close(got, contiguous_attention(*case).float(), rtol=1e-5, atol=1e-5, what="one sequence of 5 tokens in block 2")


def test_two_sequences_whose_blocks_are_scattered(solution):
    # Sequence 0 holds 10 tokens in blocks 5 then 1; sequence 1 holds 4 tokens in block 3.
    case = random_case(2, 6, 4, 4, 4, 8, [[5, 1, 0], [3, 0, 0]], [10, 4])
    got = solution.paged_decode(*case)
    assert_close(got, contiguous_attention(*case).float(), rtol=1e-5, atol=1e-5, what="two sequences, blocks out of order")


def test_grouped_query_heads(solution):
    # 6 query heads read 2 KV heads: heads 0-2 read KV head 0, heads 3-5 KV head 1.
    case = random_case(3, 3, 4, 6, 2, 8, [[2, 0]], [7])
    got = solution.paged_decode(*case)
    assert_close(got, contiguous_attention(*case).float(), rtol=1e-5, atol=1e-5, what="GQA, 6 query heads on 2 KV heads")
