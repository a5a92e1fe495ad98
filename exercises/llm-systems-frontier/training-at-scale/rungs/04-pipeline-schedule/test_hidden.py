"""Hidden tests: other pipelines, the rules for bad input, and generated pipelines against the reference."""

import random

import pytest
import reference
from grading import assert_close, assert_equal, assert_int, job_seed


def _rows(text_rows):
    return [["" if cell == ".." else cell for cell in row.split()] for row in text_rows]


def _check(got, expected, label):
    assert isinstance(got, dict), f"{label}: expected a dict, got {type(got).__name__}"
    assert_equal(got.get("timeline"), expected["timeline"], f"{label}: timeline")
    assert type(got["total_slots"]) is int, f"{label}: total_slots is {type(got['total_slots']).__name__}, the rules ask for an int"
    assert_int(got["total_slots"], expected["total_slots"], f"{label}: total_slots", "slots")
    assert type(got["bubble_fraction"]) is float, f"{label}: bubble_fraction is {type(got['bubble_fraction']).__name__}, the rules ask for a float"
    assert_close(got["bubble_fraction"], expected["bubble_fraction"], what=f"{label}: bubble_fraction")
    assert_equal(got["peak_in_flight"], expected["peak_in_flight"], f"{label}: peak_in_flight")
    assert all(type(n) is int for n in got["peak_in_flight"]), f"{label}: peak_in_flight must hold ints"


def test_gpipe_two_stages_three_micro_batches(solution):
    got = solution.simulate_pipeline(2, 3, "gpipe")
    # Stage 0's backwards wait for stage 1's: B0 on stage 0 runs one slot after stage 1's.
    timeline = _rows(["F0 F1 F2 .. .. B0 B1 B2", ".. F0 F1 F2 B0 B1 B2 .."])
    _check(got, {"timeline": timeline, "total_slots": 8, "bubble_fraction": 4 / 16, "peak_in_flight": [3, 3]}, "GPipe, 2 stages, 3 micro-batches")


def test_fewer_micro_batches_than_stages(solution):
    # 1F1B with m < p: the warm-up is capped at m, so early stages run all forwards first.
    expected = reference.simulate_pipeline(5, 2, "1f1b")
    _check(solution.simulate_pipeline(5, 2, "1f1b"), expected, "1F1B, 5 stages, 2 micro-batches")
    assert expected["peak_in_flight"] == [2, 2, 2, 2, 1]


def test_single_stage_has_no_bubble(solution):
    _check(
        solution.simulate_pipeline(1, 3, "1f1b"),
        {"timeline": [["F0", "B0", "F1", "B1", "F2", "B2"]], "total_slots": 6, "bubble_fraction": 0.0, "peak_in_flight": [1]},
        "1F1B on a single stage",
    )
    _check(
        solution.simulate_pipeline(1, 3, "gpipe"),
        {"timeline": [["F0", "F1", "F2", "B0", "B1", "B2"]], "total_slots": 6, "bubble_fraction": 0.0, "peak_in_flight": [3]},
        "GPipe on a single stage",
    )


def test_single_micro_batch_is_all_bubble_but_one_slot_per_stage(solution):
    for schedule in ("gpipe", "1f1b"):
        _check(
            solution.simulate_pipeline(3, 1, schedule),
            {"timeline": _rows(["F0 .. .. .. .. B0", ".. F0 .. .. B0 ..", ".. .. F0 B0 .. .."]), "total_slots": 6, "bubble_fraction": 12 / 18, "peak_in_flight": [1, 1, 1]},
            f"{schedule}, 3 stages, 1 micro-batch",
        )


def test_equal_stages_and_micro_batches(solution):
    _check(solution.simulate_pipeline(4, 4, "1f1b"), reference.simulate_pipeline(4, 4, "1f1b"), "1F1B, 4 stages, 4 micro-batches")
    _check(solution.simulate_pipeline(4, 4, "gpipe"), reference.simulate_pipeline(4, 4, "gpipe"), "GPipe, 4 stages, 4 micro-batches")


def test_one_f_one_b_peaks_at_p_minus_s(solution):
    got = solution.simulate_pipeline(8, 32, "1f1b")
    assert_equal(got["peak_in_flight"], [8, 7, 6, 5, 4, 3, 2, 1], "1F1B peaks, 8 stages, 32 micro-batches")
    assert_close(got["bubble_fraction"], 7 / 39, what="1F1B bubble, 8 stages, 32 micro-batches")


def test_bubble_shrinks_with_more_micro_batches(solution):
    for stages, micro_batches, expected in ((1, 1, 0.0), (2, 1, 0.5), (8, 1, 7 / 8), (8, 64, 7 / 71), (16, 128, 15 / 143)):
        got = solution.bubble_fraction(stages, micro_batches)
        assert type(got) is float, f"bubble_fraction returned {type(got).__name__}; the rules ask for a float"
        assert_close(got, expected, what=f"bubble_fraction({stages}, {micro_batches})")


def test_bad_sizes_raise(solution):
    for bad in (0, -1, 4.0, True, "4", None):
        with pytest.raises(ValueError):
            solution.bubble_fraction(bad, 8)
        with pytest.raises(ValueError):
            solution.bubble_fraction(4, bad)
        with pytest.raises(ValueError):
            solution.simulate_pipeline(bad, 8, "1f1b")
        with pytest.raises(ValueError):
            solution.simulate_pipeline(4, bad, "gpipe")


def test_schedule_names_are_exact(solution):
    # Not a string at all is not a schedule name either: a ValueError too, as the rules say.
    for bad in ("GPipe", "1F1B", "pipedream", "", " 1f1b", "interleaved", None, ["gpipe"], {"1f1b": 1}, 1):
        with pytest.raises(ValueError):
            solution.simulate_pipeline(4, 8, bad)


def test_generated_pipelines_match_the_reference(solution):
    rng = random.Random(job_seed())
    mismatches = []
    for _ in range(60):
        stages = rng.choice([1, 2, 3, 4, 5, 6, 8, 12])
        micro_batches = rng.choice([1, 2, 3, 4, 5, 7, 8, 13, 16, 24])
        schedule = rng.choice(["gpipe", "1f1b"])
        expected = reference.simulate_pipeline(stages, micro_batches, schedule)
        try:
            got = solution.simulate_pipeline(stages, micro_batches, schedule)
            _check(got, expected, f"simulate_pipeline({stages}, {micro_batches}, {schedule!r})")
            assert_close(solution.bubble_fraction(stages, micro_batches), expected["bubble_fraction"], what=f"bubble_fraction({stages}, {micro_batches})")
        except AssertionError as exc:
            mismatches.append(str(exc))
    assert not mismatches, f"{len(mismatches)} of 60 generated pipelines differ from the rules; first: {mismatches[0]}"
