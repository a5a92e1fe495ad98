"""Visible tests: the worked example (allocate, append, fork, free)."""

from grading import assert_equal, assert_int


def test_worked_example_allocate_and_append(solution):
    bm = solution.BlockManager(8, 4)
    assert_equal(bm.allocate(0, 5), [0, 1], "block table of a 5-token sequence (block size 4)")
    assert_int(bm.wasted_slots(0), 3, "unfilled slots after 5 tokens", "slots")
    assert_equal(bm.append(0, 3), [], "copies made by appending 3 tokens")
    assert_equal(bm.block_table(0), [0, 1], "block table after filling block 1")
    bm.append(0)
    assert_equal(bm.block_table(0), [0, 1, 2], "block table after a 9th token")
    assert_int(bm.num_tokens(0), 9, "tokens in sequence 0", "tokens")
    assert_int(bm.num_free_blocks(), 5, "free blocks", "blocks")


def test_worked_example_fork_and_free(solution):
    bm = solution.BlockManager(8, 4)
    bm.allocate(0, 6)
    assert_equal(bm.fork(0, 1), [0, 1], "block table of the forked sequence")
    assert_int(bm.ref_count(0), 2, "references to block 0 after the fork", "references")
    assert_int(bm.num_free_blocks(), 6, "free blocks after the fork (nothing copied)", "blocks")
    bm.free(0)
    assert_int(bm.ref_count(1), 1, "references to block 1 after freeing the parent", "references")
    assert_int(bm.num_free_blocks(), 6, "free blocks after freeing the parent (the child still uses them)", "blocks")
    bm.free(1)
    assert_int(bm.num_free_blocks(), 8, "free blocks after freeing both", "blocks")
