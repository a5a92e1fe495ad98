"""Visible tests: the worked example, 4 stages and 8 micro-batches."""

from grading import assert_close, assert_equal, assert_int

ONE_F_ONE_B = [
    "F0 F1 F2 F3 .. .. .. B0 F4 B1 F5 B2 F6 B3 F7 B4 .. B5 .. B6 .. B7",
    ".. F0 F1 F2 .. .. B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 .. B6 .. B7 ..",
    ".. .. F0 F1 .. B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 .. B7 .. ..",
    ".. .. .. F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 .. .. ..",
]


def _rows(text_rows):
    return [["" if cell == ".." else cell for cell in row.split()] for row in text_rows]


def test_bubble_fraction_closed_form(solution):
    assert_close(solution.bubble_fraction(4, 8), 3 / 11, what="bubble of 4 stages and 8 micro-batches")


def test_one_f_one_b_worked_example(solution):
    got = solution.simulate_pipeline(4, 8, "1f1b")
    assert_equal(got["timeline"], _rows(ONE_F_ONE_B), "1F1B timeline, 4 stages, 8 micro-batches")
    assert_int(got["total_slots"], 22, "total slots", "slots")
    assert_close(got["bubble_fraction"], 24 / 88, what="simulated bubble fraction")
    assert_equal(got["peak_in_flight"], [4, 3, 2, 1], "1F1B peak micro-batches in flight per stage")


def test_gpipe_keeps_every_micro_batch_in_flight(solution):
    got = solution.simulate_pipeline(4, 8, "gpipe")
    assert_int(got["total_slots"], 22, "GPipe total slots", "slots")
    assert_equal(got["peak_in_flight"], [8, 8, 8, 8], "GPipe peak micro-batches in flight per stage")
