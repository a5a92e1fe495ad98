"""Hidden tests: FIFO, budget, zero outputs, idle gaps, ordering and bad input."""

import pytest
from grading import assert_close, assert_equal, assert_int


def _req(rid, arrival, prompt, output):
    return {"id": rid, "arrival": arrival, "prompt": prompt, "output": output}


def _check(result, label, *, steps, generated, finish, latency):
    assert_int(result["steps"], steps, f"{label}: steps", "steps")
    assert_int(result["generated_tokens"], generated, f"{label}: generated tokens", "tokens")
    assert_close(result["throughput"], generated / steps if steps else 0.0, what=f"{label}: throughput (tokens per step)")
    assert_equal(result["finish"], finish, f"{label}: finish times")
    assert_equal(result["latency"], latency, f"{label}: latencies")


def test_fifo_blocks_requests_behind_a_head_that_does_not_fit(solution):
    trace = [_req("w", 0, 7, 5), _req("x", 0, 2, 1), _req("y", 0, 9, 3), _req("z", 1, 1, 2)]
    # At step 1, y (12 tokens) does not fit beside w (12 of 20); z (3) would, but must wait behind y.
    result = solution.simulate_batching(trace, 3, 20, "continuous")
    _check(
        result,
        "continuous, 3 slots, budget 20",
        steps=8,
        generated=11,
        finish={"x": 1, "w": 5, "y": 8, "z": 7},
        latency={"w": 5, "x": 1, "y": 8, "z": 6},
    )


def test_static_batch_waits_for_its_longest_member(solution):
    trace = [_req("r1", 0, 10, 5), _req("r2", 0, 10, 1), _req("r3", 0, 10, 2), _req("r4", 1, 5, 3), _req("r5", 2, 5, 1)]
    static = solution.simulate_batching(trace, 3, 100, "static")
    _check(
        static,
        "static, 3 slots",
        steps=8,
        generated=12,
        finish={"r1": 5, "r2": 1, "r3": 2, "r4": 8, "r5": 6},
        latency={"r1": 5, "r2": 1, "r3": 2, "r4": 7, "r5": 4},
    )
    continuous = solution.simulate_batching(trace, 3, 100, "continuous")
    _check(
        continuous,
        "continuous, 3 slots",
        steps=5,
        generated=12,
        finish={"r1": 5, "r2": 1, "r3": 2, "r4": 4, "r5": 3},
        latency={"r1": 5, "r2": 1, "r3": 2, "r4": 3, "r5": 1},
    )


def test_zero_output_requests_finish_at_admission(solution):
    trace = [_req("z1", 0, 3, 0), _req("a", 0, 2, 2), _req("z2", 1, 1, 0), _req("b", 1, 2, 1)]
    result = solution.simulate_batching(trace, 1, 10, "continuous")
    _check(
        result,
        "continuous, 1 slot, with zero-output requests",
        steps=3,
        generated=3,
        finish={"z1": 0, "a": 2, "z2": 2, "b": 3},
        latency={"z1": 0, "a": 2, "z2": 1, "b": 2},
    )
    result = solution.simulate_batching(trace, 2, 10, "static")
    _check(
        result,
        "static, 2 slots, with zero-output requests",
        steps=3,
        generated=3,
        finish={"z1": 0, "a": 2, "z2": 2, "b": 3},
        latency={"z1": 0, "a": 2, "z2": 1, "b": 2},
    )


def test_queue_order_is_arrival_then_list_position(solution):
    trace = [_req("late", 2, 1, 1), _req("first", 0, 1, 1), _req("second", 0, 1, 3)]
    for policy in ("continuous", "static"):
        result = solution.simulate_batching(trace, 1, 50, policy)
        _check(
            result,
            f"{policy}, 1 slot, list not sorted by arrival",
            steps=5,
            generated=5,
            finish={"first": 1, "second": 4, "late": 5},
            latency={"late": 3, "first": 1, "second": 4},
        )


def test_idle_gap_between_arrivals_is_not_a_step(solution):
    trace = [_req("early", 0, 5, 2), _req("later", 10, 5, 3)]
    for policy in ("continuous", "static"):
        result = solution.simulate_batching(trace, 2, 50, policy)
        _check(
            result,
            f"{policy}, nothing to run between steps 2 and 10",
            steps=5,
            generated=5,
            finish={"early": 2, "later": 13},
            latency={"early": 2, "later": 3},
        )


def test_budget_reserves_prompt_plus_output(solution):
    trace = [_req("long", 0, 4, 10), _req("short", 0, 4, 4)]
    result = solution.simulate_batching(trace, 4, 20, "continuous")
    _check(
        result,
        "continuous, budget 20 (14 + 8 reserved would exceed it)",
        steps=14,
        generated=14,
        finish={"long": 10, "short": 14},
        latency={"long": 10, "short": 14},
    )
    result = solution.simulate_batching(trace, 4, 22, "continuous")
    _check(
        result,
        "continuous, budget 22 (exactly enough for both)",
        steps=10,
        generated=14,
        finish={"long": 10, "short": 4},
        latency={"long": 10, "short": 4},
    )


def test_one_slot_serializes_both_policies(solution):
    trace = [_req("p", 0, 1, 2), _req("q", 0, 1, 3), _req("r", 0, 1, 1)]
    for policy in ("continuous", "static"):
        result = solution.simulate_batching(trace, 1, 1000, policy)
        _check(
            result,
            f"{policy}, 1 slot",
            steps=6,
            generated=6,
            finish={"p": 2, "q": 5, "r": 6},
            latency={"p": 2, "q": 5, "r": 6},
        )


def test_empty_trace_and_all_zero_outputs(solution):
    for policy in ("continuous", "static"):
        result = solution.simulate_batching([], 2, 100, policy)
        _check(result, f"{policy}, empty trace", steps=0, generated=0, finish={}, latency={})
        trace = [_req("n1", 0, 5, 0), _req("n2", 3, 5, 0)]
        result = solution.simulate_batching(trace, 2, 100, policy)
        _check(
            result,
            f"{policy}, only zero-output requests",
            steps=0,
            generated=0,
            finish={"n1": 0, "n2": 3},
            latency={"n1": 0, "n2": 0},
        )


TRACE_14 = [
    _req("req-00", 3, 9, 17), _req("req-01", 8, 23, 1), _req("req-02", 4, 55, 0), _req("req-03", 2, 45, 6),
    _req("req-04", 1, 9, 0), _req("req-05", 6, 22, 10), _req("req-06", 0, 43, 1), _req("req-07", 13, 22, 6),
    _req("req-08", 8, 59, 0), _req("req-09", 5, 52, 6), _req("req-10", 10, 25, 1), _req("req-11", 6, 56, 3),
    _req("req-12", 3, 13, 6), _req("req-13", 3, 30, 3),
]


def test_longer_trace_both_policies(solution):
    result = solution.simulate_batching(TRACE_14, 4, 120, "continuous")
    _check(
        result,
        "continuous, 14 requests, 4 slots, budget 120",
        steps=24,
        generated=60,
        finish={
            "req-00": 20, "req-01": 19, "req-02": 9, "req-03": 8, "req-04": 1, "req-05": 21, "req-06": 1,
            "req-07": 25, "req-08": 19, "req-09": 15, "req-10": 20, "req-11": 18, "req-12": 9, "req-13": 11,
        },
        latency={
            "req-00": 17, "req-01": 11, "req-02": 5, "req-03": 6, "req-04": 0, "req-05": 15, "req-06": 1,
            "req-07": 12, "req-08": 11, "req-09": 10, "req-10": 10, "req-11": 12, "req-12": 6, "req-13": 8,
        },
    )
    result = solution.simulate_batching(TRACE_14, 4, 120, "static")
    _check(
        result,
        "static, 14 requests, 4 slots, budget 120",
        steps=46,
        generated=60,
        finish={
            "req-00": 25, "req-01": 32, "req-02": 25, "req-03": 8, "req-04": 1, "req-05": 41, "req-06": 1,
            "req-07": 47, "req-08": 41, "req-09": 31, "req-10": 42, "req-11": 34, "req-12": 14, "req-13": 11,
        },
        latency={
            "req-00": 22, "req-01": 24, "req-02": 21, "req-03": 6, "req-04": 0, "req-05": 35, "req-06": 1,
            "req-07": 34, "req-08": 33, "req-09": 26, "req-10": 32, "req-11": 28, "req-12": 11, "req-13": 8,
        },
    )


def test_request_larger_than_budget_raises(solution):
    trace = [_req("ok", 0, 5, 5), _req("huge", 7, 10, 11)]
    for policy in ("continuous", "static"):
        with pytest.raises(ValueError):
            solution.simulate_batching(trace, 2, 20, policy)


def test_invalid_arguments_raise(solution):
    good = [_req("a", 0, 2, 2)]
    bad_calls = [
        (good, 0, 10, "continuous"),
        (good, 2, 0, "continuous"),
        (good, 2, 10, "dynamic"),
        ([_req("a", -1, 2, 2)], 2, 10, "continuous"),
        ([_req("a", 0, -2, 2)], 2, 10, "continuous"),
        ([_req("a", 0, 2, -1)], 2, 10, "static"),
        ([_req("a", 0, 2, 2), _req("a", 1, 2, 2)], 2, 10, "continuous"),
    ]
    for args in bad_calls:
        with pytest.raises(ValueError):
            solution.simulate_batching(*args)
