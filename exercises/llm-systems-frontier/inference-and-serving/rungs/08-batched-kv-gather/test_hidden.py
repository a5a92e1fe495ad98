"""Hidden tests: padding, page boundaries, table checks, dtypes, and generated batches against the reference."""

import random

import numpy as np
import pytest
import reference
from grading import job_seed


def _pages(num_pages, page_size, head_dim, dtype=np.float32):
    # Every row distinct and none zero, so a row read from the wrong place or left out shows.
    return (np.arange(num_pages * page_size * head_dim).reshape(num_pages, page_size, head_dim) + 1).astype(dtype)


def _same(got, want, what):
    assert isinstance(got, np.ndarray), f"{what}: returned a {type(got).__name__}, not a numpy array"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, want {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, want {want.dtype}"
    assert np.array_equal(got, want), f"{what}: values differ"


def test_rows_past_a_length_are_zero(solution):
    pages = _pages(6, 4, 2)
    for lengths in ([5, 1, 8], [1, 8, 5], [8, 8, 8]):
        tables = [[3, 1], [0, 4], [5, 2]]
        _same(solution.gather_kv(pages, tables, lengths), reference.gather_kv(pages, tables, lengths), f"lengths {lengths}")


def test_page_boundaries_exactly_full_and_one_more(solution):
    pages = _pages(8, 4, 3)
    for length in (3, 4, 5, 7, 8, 9):
        tables = [[6, 0, 7]]
        _same(solution.gather_kv(pages, tables, [length]), reference.gather_kv(pages, tables, [length]), f"one sequence of {length} tokens")


def test_length_zero_and_an_empty_batch(solution):
    pages = _pages(3, 2, 4)
    _same(solution.gather_kv(pages, [], []), np.zeros((0, 0, 4), np.float32), "an empty batch")
    _same(solution.gather_kv(pages, [[]], [0]), np.zeros((1, 0, 4), np.float32), "one sequence with nothing cached")
    _same(solution.gather_kv(pages, [[], [2]], [0, 1]), reference.gather_kv(pages, [[], [2]], [0, 1]), "a sequence with nothing cached beside one token")


def test_extra_table_entries_are_never_read(solution):
    pages = _pages(4, 2, 2)
    tables = [[1, 3, -1, 99], [2, 10**9]]
    _same(solution.gather_kv(pages, tables, [3, 2]), reference.gather_kv(pages, [[1, 3], [2]], [3, 2]), "tables padded past their pages")


def test_first_and_last_page_ids(solution):
    pages = _pages(5, 3, 2)
    tables = [[0, 4], [4], [0]]
    _same(solution.gather_kv(pages, tables, [6, 3, 1]), reference.gather_kv(pages, tables, [6, 3, 1]), "pages 0 and 4 of 5")


def test_the_dtype_is_kept(solution):
    for dtype in (np.float16, np.float64, np.int32):
        pages = _pages(3, 2, 2, dtype)
        _same(solution.gather_kv(pages, [[2, 1]], [3]), reference.gather_kv(pages, [[2, 1]], [3]), f"pages of {np.dtype(dtype).name}")


@pytest.mark.parametrize(
    ("tables", "lengths"),
    [
        ([[0], [1]], [1]),  # more tables than lengths
        ([[0]], [1, 1]),  # fewer
        ([[0, 1]], [5]),  # 5 tokens at page size 2 need 3 pages
        ([[0], []], [2, 1]),  # the second needs one page and lists none
        ([[4]], [1]),  # page 4 of a cache of 4
        ([[1, -1]], [3]),  # a negative id is not counted from the end
        ([[0]], [-1]),
        ([[0], [0]], [1, -1]),  # a negative length beside a one-token sequence
        ([[6]], [1]),  # page 6 of a cache of 4
        ([[0]], [True]),
        ([[0]], [1.0]),
    ],
)
def test_bad_tables_and_lengths_raise(solution, tables, lengths):
    with pytest.raises(ValueError):
        solution.gather_kv(_pages(4, 2, 2), tables, lengths)


def test_generated_batches_match_the_reference(solution):
    rng = random.Random(job_seed())
    nprng = np.random.default_rng(job_seed())
    for _ in range(40):
        num_pages, page_size, head_dim = rng.randint(1, 12), rng.randint(1, 5), rng.randint(1, 4)
        pages = nprng.standard_normal((num_pages, page_size, head_dim)).astype(np.float32)
        lengths = [rng.randint(0, page_size * 4) for _ in range(rng.randint(0, 5))]
        tables = [[rng.randrange(num_pages) for _ in range(-(-n // page_size) + rng.randint(0, 2))] for n in lengths]
        _same(solution.gather_kv(pages, tables, lengths), reference.gather_kv(pages, tables, lengths), f"batch {lengths} at page size {page_size}")
