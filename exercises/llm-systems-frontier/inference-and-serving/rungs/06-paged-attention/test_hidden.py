"""Hidden tests: block counts, allocation order, out of blocks, copy-on-write, reference counts, waste."""

import random

import pytest
import reference
from grading import assert_equal, assert_int, call_by_reference, job_seed


def test_blocks_for_n_tokens_is_ceil_n_over_b(solution):
    bm = solution.BlockManager(64, 16)
    cases = [(10, 0), (11, 1), (12, 16), (13, 17), (14, 48), (15, 33)]
    expected_lengths = {10: 0, 11: 1, 12: 1, 13: 2, 14: 3, 15: 3}
    for seq_id, tokens in cases:
        table = bm.allocate(seq_id, tokens)
        assert_int(len(table), expected_lengths[seq_id], f"blocks for {tokens} tokens at block size 16", "blocks")
    assert_int(bm.num_free_blocks(), 64 - 10, "free blocks after those allocations", "blocks")


def test_huge_blocks_are_counted_in_integers(solution):
    # ceil(n / B) in floats: 10**17 + 1 tokens at block size 10**17 would look like exactly one block.
    bm = solution.BlockManager(4, 10**17)
    assert_equal(bm.allocate("x", 10**17 + 1), [0, 1], "table of 10**17 + 1 tokens at block size 10**17")
    assert_int(bm.wasted_slots("x"), 10**17 - 1, "unfilled slots of the last block", "slots")
    assert_equal(bm.append("x", 10**17 - 1), [], "filling the last block exactly")
    assert_int(bm.wasted_slots("x"), 0, "unfilled slots once the last block is full", "slots")
    assert_equal(bm.append("x", 1), [], "one token more takes a new block")
    assert_equal(bm.block_table("x"), [0, 1, 2], "table after one token more")


def test_tables_are_new_lists_and_copies_are_tuples(solution):
    bm = solution.BlockManager(8, 2)
    for what, table in (("allocate", bm.allocate("p", 3)), ("fork", bm.fork("p", "c")), ("block_table", bm.block_table("p"))):
        assert type(table) is list and all(type(block) is int for block in table), f"{what} returned {table!r}; the rules ask for a list of ints"
    copies = bm.append("c", 1)
    assert type(copies) is list and copies and all(type(pair) is tuple and len(pair) == 2 for pair in copies), f"append returned {copies!r}; the rules ask for a list of (src, dst) tuples"
    # The table handed out is the caller's: changing it leaves the manager's own table alone.
    for method in ("block_table", "fork"):
        args = ("p",) if method == "block_table" else ("p", "d")
        table = call_by_reference(bm, method, *args)
        table.append(7)
        table.pop(0)
    assert_equal(bm.block_table("p"), [0, 1], "parent's table after the caller changed lists it got")
    assert_equal(bm.block_table("d"), [0, 1], "fork's table after the caller changed the list it got")
    assert_int(bm.num_tokens("d"), 3, "tokens of the fork", "tokens")


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


def test_parent_writing_first_gets_the_copy(solution):
    bm = solution.BlockManager(8, 4)
    bm.allocate("p", 6)  # blocks 0, 1 (block 1 holds 2 of 4)
    bm.fork("p", "c")
    assert_equal(bm.append("p", 1), [(1, 2)], "copies when the parent writes first into the shared, partly filled block")
    assert_equal(bm.block_table("p"), [0, 2], "parent's table after its copy-on-write")
    assert_equal(bm.block_table("c"), [0, 1], "child's table (keeps the old block)")
    assert_equal(bm.append("c", 2), [], "child now owns block 1 alone: it writes in place")
    assert_equal(bm.block_table("c"), [0, 1], "child's table after writing in place")
    assert_int(bm.ref_count(1), 1, "references to block 1", "references")


def test_copy_on_write_needs_a_free_block(solution):
    bm = solution.BlockManager(3, 4)
    bm.allocate("p", 9)  # blocks 0, 1, 2: the pool is empty, block 2 holds 1 token
    bm.fork("p", "c")
    with pytest.raises(RuntimeError):
        bm.append("c", 1)  # fits in block 2, but block 2 is shared: the copy needs a block
    assert_equal(bm.block_table("c"), [0, 1, 2], "child's table after the refused append")
    assert_int(bm.num_tokens("c"), 9, "child's tokens after the refused append", "tokens")
    assert_int(bm.ref_count(2), 2, "references to the shared block after the refused append", "references")
    assert_int(bm.num_free_blocks(), 0, "free blocks after the refused append", "blocks")
    bm.free("p")
    assert_equal(bm.append("c", 3), [], "append once the other sharer is gone (no copy needed)")
    assert_equal(bm.block_table("c"), [0, 1, 2], "child's table after filling block 2")


def test_copy_fits_but_new_blocks_do_not(solution):
    bm = solution.BlockManager(4, 4)
    bm.allocate("p", 6)  # blocks 0, 1
    bm.fork("p", "c")
    bm.allocate("x", 1)  # block 2: one block left
    with pytest.raises(RuntimeError):
        bm.append("c", 5)  # the copy of block 1 plus one new block: 2 needed, 1 free
    assert_equal(bm.block_table("c"), [0, 1], "child's table after the refused append (no copy either)")
    assert_int(bm.ref_count(1), 2, "references to block 1 after the refused append", "references")
    assert_int(bm.num_free_blocks(), 1, "free blocks after the refused append", "blocks")
    assert_equal(bm.append("c", 2), [(1, 3)], "copies when the append fits in the copied block")


def test_copy_takes_the_lowest_block_before_new_ones(solution):
    bm = solution.BlockManager(10, 4)
    bm.allocate("a", 4)  # block 0
    bm.allocate("p", 6)  # blocks 1, 2
    bm.allocate("b", 8)  # blocks 3, 4
    bm.free("a")  # block 0 is free again
    bm.fork("p", "c")
    assert_equal(bm.append("c", 7), [(2, 0)], "copies when the append also needs new blocks")
    assert_equal(bm.block_table("c"), [1, 0, 5, 6], "child's table: the copy in the lowest free block, then new blocks")


def test_appending_zero_tokens_never_copies(solution):
    bm = solution.BlockManager(6, 4)
    bm.allocate(1, 5)
    bm.fork(1, 2)
    assert_equal(bm.append(2, 0), [], "copies when appending 0 tokens to a shared, partly filled block")
    assert_equal(bm.block_table(2), [0, 1], "table after appending 0 tokens")
    assert_int(bm.ref_count(1), 2, "references to the shared block after appending 0 tokens", "references")


def test_checks_happen_in_the_documented_order(solution):
    bm = solution.BlockManager(4, 4)
    bm.allocate("a", 4)
    with pytest.raises(ValueError):
        bm.allocate("a", 1000)  # id in use beats out of blocks
    with pytest.raises(ValueError):
        bm.allocate("a", -1)  # id in use (both are ValueError; nothing may change)
    with pytest.raises(ValueError):
        bm.allocate("b", 2.0)  # a bad count beats out of blocks... and is refused
    with pytest.raises(KeyError):
        bm.append("nobody", -1)  # unknown id beats a bad count
    with pytest.raises(KeyError):
        bm.append("nobody", 1000)  # unknown id beats out of blocks
    with pytest.raises(ValueError):
        bm.append("a", -5)
    with pytest.raises(KeyError):
        bm.fork("nobody", "a")  # unknown parent beats a child id in use
    with pytest.raises(ValueError):
        bm.fork("a", "a")
    assert_int(bm.num_free_blocks(), 3, "free blocks after the refused calls", "blocks")
    assert_equal(bm.block_table("a"), [0], "table of 'a' after the refused calls")


def test_numbers_of_another_type_raise(solution):
    for args in ((8.0, 4), (8, 4.0), (True, 4), (8, "4")):
        with pytest.raises(ValueError):
            solution.BlockManager(*args)
    bm = solution.BlockManager(8, 4)
    bm.allocate("s", 2)
    for bad in (1.0, True, "3", None):
        with pytest.raises(ValueError):
            bm.allocate("t", bad)
        with pytest.raises(ValueError):
            bm.append("s", bad)
    assert_int(bm.num_tokens("s"), 2, "tokens after the refused calls", "tokens")


def test_ref_count_of_a_block_that_does_not_exist_raises(solution):
    bm = solution.BlockManager(4, 2)
    bm.allocate(0, 8)
    for block in (-1, 4, 100, 1.0, "0", True, False):
        with pytest.raises(ValueError):
            bm.ref_count(block)
    assert_int(bm.ref_count(3), 1, "references to the last block", "references")


def test_a_freed_id_can_be_used_again(solution):
    bm = solution.BlockManager(6, 2)
    bm.allocate("x", 3)
    bm.free("x")
    assert_equal(bm.allocate("x", 1), [0], "table of a new sequence reusing a freed id")
    bm.fork("x", "y")
    bm.free("y")
    assert_equal(bm.fork("x", "y"), [0], "table of a fork reusing a freed id")
    assert_int(bm.ref_count(0), 2, "references after forking to a reused id", "references")


def test_int_and_string_ids_are_different(solution):
    bm = solution.BlockManager(6, 2)
    assert_equal(bm.allocate(0, 2), [0], "table of sequence 0")
    assert_equal(bm.allocate("0", 2), [1], "table of sequence '0' (a different id)")
    bm.free(0)
    assert_equal(bm.block_table("0"), [1], "table of '0' after freeing 0")
    with pytest.raises(KeyError):
        bm.num_tokens(0)


def test_empty_sequences_fork_and_grow(solution):
    bm = solution.BlockManager(4, 3)
    assert_equal(bm.allocate("e", 0), [], "table of an empty sequence")
    assert_equal(bm.fork("e", "f"), [], "table of a fork of an empty sequence")
    assert_equal(bm.append("f", 4), [], "copies when an empty fork grows (nothing to copy)")
    assert_equal(bm.block_table("f"), [0, 1], "table of the fork after 4 tokens")
    assert_equal(bm.block_table("e"), [], "table of the empty original")
    assert_int(bm.wasted_slots("e"), 0, "unfilled slots of an empty sequence", "slots")


# ---------------------------------------------------------------------------
# Differential test: random call sequences against the reference, comparing
# every result or exception and, at the end of each scenario, the whole state.
# ---------------------------------------------------------------------------


def _call(obj, name, *args):
    try:
        result = getattr(obj, name)(*args)
    except Exception as exc:  # noqa: BLE001 - any exception is an outcome to compare
        return ("raises", "RuntimeError" if isinstance(exc, RuntimeError) else type(exc).__name__)
    if isinstance(result, list):
        result = [list(item) if isinstance(item, (list, tuple)) else item for item in result]
    return ("value", result)


def _random_op(rng, live, dead, block_size, num_blocks):
    ids = [*live, *dead, "ghost", 7, "7"]
    kind = rng.choices(["allocate", "append", "fork", "free", "bad"], weights=[3, 6, 3, 2, 1])[0]
    tokens = rng.choice([0, 1, 1, 2, block_size - 1, block_size, block_size + 1, 2 * block_size, rng.randrange(num_blocks * block_size + 2)])
    if kind == "allocate":
        return "allocate", (rng.choice([*dead, f"s{rng.randrange(40)}", rng.randrange(40)]) if rng.random() < 0.9 else rng.choice(ids), tokens)
    if kind == "append" and live:
        return "append", (rng.choice(live), rng.choice([1, 1, 1, tokens]))
    if kind == "fork" and live:
        return "fork", (rng.choice(live), rng.choice([*dead, f"f{rng.randrange(40)}", rng.choice(ids)]))
    if kind == "free" and live:
        return "free", (rng.choice(live),)
    bad = [
        ("allocate", (rng.choice(ids), rng.choice([-1, 1.0, True, 10**6]))),
        ("append", (rng.choice(ids), rng.choice([-1, 2.0, 0, 10**6]))),
        ("fork", (rng.choice(ids), rng.choice(ids))),
        ("free", (rng.choice(ids),)),
        ("ref_count", (rng.choice([-1, num_blocks, 0, num_blocks - 1, 1.0]),)),
        ("num_tokens", (rng.choice(ids),)),
        ("wasted_slots", (rng.choice(ids),)),
        ("block_table", (rng.choice(ids),)),
    ]
    return rng.choice(bad)


def test_generated_call_sequences_match_the_reference(solution):
    rng = random.Random(job_seed())
    for scenario in range(24):
        num_blocks, block_size = rng.choice([1, 2, 3, 5, 8, 12]), rng.choice([1, 2, 3, 4, 16])
        mine, ref = solution.BlockManager(num_blocks, block_size), reference.BlockManager(num_blocks, block_size)
        history = []
        for _ in range(30):
            live = list(ref._tables)
            # Ids of sequences freed or never created; ref_count's block ids are no sequence ids
            # (a float block id reused as a sequence id would leave the documented ids: ints and strings).
            dead = [seq for seq, _ in history if seq is not None and seq not in ref._tables][:3]
            name, args = _random_op(rng, live, dead, block_size, num_blocks)
            expected, got = _call(ref, name, *args), _call(mine, name, *args)
            history.append((None if name == "ref_count" else args[0], f"{name}{args!r} -> {expected}"))
            label = f"scenario {scenario} (BlockManager({num_blocks}, {block_size})), call {len(history)}: " + "; ".join(h for _, h in history[-6:])
            assert_equal(got, expected, label)
            if name in ("allocate", "append", "fork") and expected[0] == "value":
                seq = args[1] if name == "fork" else args[0]
                assert_equal(_call(mine, "block_table", seq), _call(ref, "block_table", seq), f"{label}: block table of {seq!r}")
                assert_equal(_call(mine, "num_free_blocks"), _call(ref, "num_free_blocks"), f"{label}: free blocks")
        label = f"scenario {scenario} (BlockManager({num_blocks}, {block_size})) after {len(history)} calls, last: " + "; ".join(h for _, h in history[-4:])
        for seq in ref._tables:
            for name in ("block_table", "num_tokens", "wasted_slots"):
                assert_equal(_call(mine, name, seq), _call(ref, name, seq), f"{label}: {name}({seq!r})")
        for seq in ref._tables:
            for name in ("num_tokens", "wasted_slots"):
                value = getattr(mine, name)(seq)
                assert type(value) is int, f"{label}: {name}({seq!r}) returned {type(value).__name__} {value!r}; the rules ask for an int"
            table = mine.block_table(seq)
            assert all(type(block) is int for block in table), f"{label}: block_table({seq!r}) = {table!r} holds non-int entries"
        free = mine.num_free_blocks()
        assert type(free) is int, f"{label}: num_free_blocks() returned {type(free).__name__} {free!r}; the rules ask for an int"
        refs = [_call(ref, "ref_count", block) for block in range(num_blocks)]
        assert_equal([_call(mine, "ref_count", block) for block in range(num_blocks)], refs, f"{label}: reference counts of blocks 0..{num_blocks - 1}")
