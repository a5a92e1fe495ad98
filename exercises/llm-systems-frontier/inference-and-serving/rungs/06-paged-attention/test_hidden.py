"""Hidden tests: block counts, allocation order, out of blocks, copy-on-write, reference counts, waste."""

import pytest
from grading import assert_equal, assert_int


def test_blocks_for_n_tokens_is_ceil_n_over_b(solution):
    bm = solution.BlockManager(64, 16)
    cases = [(10, 0), (11, 1), (12, 16), (13, 17), (14, 48), (15, 33)]
    expected_lengths = {10: 0, 11: 1, 12: 1, 13: 2, 14: 3, 15: 3}
    for seq_id, tokens in cases:
        table = bm.allocate(seq_id, tokens)
        assert_int(len(table), expected_lengths[seq_id], f"blocks for {tokens} tokens at block size 16", "blocks")
    assert_int(bm.num_free_blocks(), 64 - 10, "free blocks after those allocations", "blocks")


def test_lowest_free_block_is_handed_out_first(solution):
    bm = solution.BlockManager(10, 2)
    bm.allocate("a", 4)  # blocks 0, 1
    bm.allocate("b", 2)  # block 2
    bm.allocate("c", 6)  # blocks 3, 4, 5
    bm.free("c")
    bm.free("a")
    assert_equal(bm.allocate("d", 5), [0, 1, 3], "table of a new 5-token sequence after freeing blocks 3-5, then 0-1")
    bm.append("b", 1)
    assert_equal(bm.block_table("b"), [2, 4], "table of b after growing into a second block")


def test_append_fills_tail_before_new_block(solution):
    bm = solution.BlockManager(16, 8)
    bm.allocate(7, 3)
    for _ in range(5):
        bm.append(7)
    assert_equal(bm.block_table(7), [0], "table after 8 tokens in an 8-slot block")
    assert_int(bm.wasted_slots(7), 0, "unfilled slots in a full block", "slots")
    bm.append(7, 17)
    assert_equal(bm.block_table(7), [0, 1, 2, 3], "table after 25 tokens")
    assert_int(bm.wasted_slots(7), 7, "unfilled slots after 25 tokens (block size 8)", "slots")
    assert_equal(bm.append(7, 0), [], "appending zero tokens")
    assert_equal(bm.block_table(7), [0, 1, 2, 3], "table after appending zero tokens")


def test_out_of_blocks_raises_and_changes_nothing(solution):
    bm = solution.BlockManager(5, 4)
    bm.allocate(1, 9)  # 3 blocks
    with pytest.raises(RuntimeError):
        bm.allocate(2, 12)  # needs 3, only 2 free
    assert_int(bm.num_free_blocks(), 2, "free blocks after a refused allocation", "blocks")
    with pytest.raises(KeyError):
        bm.block_table(2)  # the refused sequence must not exist
    with pytest.raises(RuntimeError):
        bm.append(1, 12)  # 21 tokens need 6 blocks: 3 more, only 2 free
    assert_int(bm.num_tokens(1), 9, "tokens after a refused append", "tokens")
    assert_equal(bm.block_table(1), [0, 1, 2], "table after a refused append")
    assert_int(bm.num_free_blocks(), 2, "free blocks after a refused append", "blocks")
    bm.append(1, 11)  # 20 tokens: exactly 5 blocks
    assert_int(bm.num_free_blocks(), 0, "free blocks after filling the pool exactly", "blocks")


def test_fork_shares_blocks_and_counts_references(solution):
    bm = solution.BlockManager(12, 4)
    bm.allocate("p", 10)
    bm.fork("p", "c1")
    bm.fork("c1", "c2")
    for seq in ("p", "c1", "c2"):
        assert_equal(bm.block_table(seq), [0, 1, 2], f"table of {seq!r} after two forks")
        assert_int(bm.num_tokens(seq), 10, f"tokens of {seq!r}", "tokens")
    for block in (0, 1, 2):
        assert_int(bm.ref_count(block), 3, f"references to block {block}", "references")
    assert_int(bm.ref_count(3), 0, "references to an unused block", "references")
    assert_int(bm.num_free_blocks(), 9, "free blocks after two forks", "blocks")


def test_append_to_shared_partial_block_copies_on_write(solution):
    bm = solution.BlockManager(12, 4)
    bm.allocate("p", 6)  # blocks 0, 1 (block 1 holds 2 of 4)
    bm.fork("p", "c")
    copies = bm.append("c", 1)
    assert_equal(copies, [(1, 2)], "copies made when the child writes into the shared, partly filled block 1")
    assert_equal(bm.block_table("c"), [0, 2], "child's table after copy-on-write")
    assert_equal(bm.block_table("p"), [0, 1], "parent's table (unchanged)")
    assert_int(bm.ref_count(1), 1, "references to block 1 after the copy", "references")
    assert_int(bm.ref_count(0), 2, "references to block 0 (still shared)", "references")
    assert_equal(bm.append("p", 3), [], "parent appends into block 1, now its own: no copy")
    assert_equal(bm.block_table("p"), [0, 1, 3], "parent's table after 9 tokens")
    assert_int(bm.num_tokens("c"), 7, "child's tokens", "tokens")


def test_shared_full_block_is_not_copied(solution):
    bm = solution.BlockManager(12, 4)
    bm.allocate("p", 8)  # two full blocks
    bm.fork("p", "c")
    assert_equal(bm.append("c", 2), [], "copies when the shared last block is already full")
    assert_equal(bm.block_table("c"), [0, 1, 2], "child's table: shared full blocks plus a new one")
    assert_int(bm.ref_count(1), 2, "references to the shared full block 1", "references")


def test_free_returns_blocks_only_when_unreferenced(solution):
    bm = solution.BlockManager(10, 4)
    bm.allocate("p", 7)  # blocks 0, 1
    bm.fork("p", "c")
    bm.append("c", 2)  # copy-on-write: block 1 -> 2
    bm.free("p")
    assert_int(bm.num_free_blocks(), 7, "free blocks after freeing the parent", "blocks")
    assert_int(bm.ref_count(0), 1, "references to block 0 (child still uses it)", "references")
    assert_int(bm.ref_count(1), 0, "references to block 1 (only the parent used it)", "references")
    assert_equal(bm.allocate("n", 4), [1], "a new sequence gets the lowest freed block")
    bm.free("c")
    assert_int(bm.num_free_blocks(), 9, "free blocks after freeing the child", "blocks")


def test_wasted_slots_are_the_unfilled_tail(solution):
    bm = solution.BlockManager(32, 16)
    bm.allocate(0, 1)
    bm.allocate(1, 16)
    bm.allocate(2, 33)
    bm.allocate(3, 0)
    expected = {0: 15, 1: 0, 2: 15, 3: 0}
    for seq, waste in expected.items():
        assert_int(bm.wasted_slots(seq), waste, f"unfilled slots of sequence {seq} (block size 16)", "slots")


def test_invalid_calls_raise(solution):
    for args in ((0, 4), (8, 0), (-1, 4)):
        with pytest.raises(ValueError):
            solution.BlockManager(*args)
    bm = solution.BlockManager(8, 4)
    bm.allocate("x", 3)
    with pytest.raises(ValueError):
        bm.allocate("x", 1)  # id already in use
    with pytest.raises(ValueError):
        bm.allocate("y", -1)
    with pytest.raises(ValueError):
        bm.append("x", -2)
    with pytest.raises(ValueError):
        bm.fork("x", "x")
    with pytest.raises(KeyError):
        bm.append("nobody", 1)
    with pytest.raises(KeyError):
        bm.fork("nobody", "z")
    with pytest.raises(KeyError):
        bm.free("nobody")
    bm.free("x")
    with pytest.raises(KeyError):
        bm.free("x")  # freeing twice
    assert_int(bm.num_free_blocks(), 8, "free blocks after the failed calls", "blocks")


def test_two_managers_are_independent(solution):
    first = solution.BlockManager(4, 2)
    second = solution.BlockManager(6, 2)
    first.allocate(0, 8)
    assert_equal(second.allocate(0, 3), [0, 1], "table in a second manager (its own pool)")
    assert_int(first.num_free_blocks(), 0, "free blocks of the first manager", "blocks")
    assert_int(second.num_free_blocks(), 4, "free blocks of the second manager", "blocks")
