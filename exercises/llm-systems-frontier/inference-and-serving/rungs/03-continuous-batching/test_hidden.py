"""Hidden tests: FIFO, budget, zero outputs, idle gaps, ordering and bad input."""

import copy
import random

import pytest
import reference
from grading import assert_arguments_unchanged, assert_close, assert_equal, assert_int, job_seed


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
    too_big = [
        _req("huge", 7, 10, 11),
        _req("prompt-only", 3, 21, 0),  # no output at all, but the prompt alone is over the budget
        _req("output-only", 3, 0, 21),
        _req("enormous", 0, 10**12, 10**12),
    ]
    for bad in too_big:
        for policy in ("continuous", "static"):
            with pytest.raises(ValueError):
                solution.simulate_batching([_req("ok", 0, 5, 5), bad], 2, 20, policy)


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
        # An empty trace has nothing to simulate, but its arguments are still checked.
        ([], 0, 16, "continuous"),
        ([], 2, 16.0, "continuous"),
        ([], True, 16, "static"),
        ([], 2, 16, "Static"),
    ]
    for args in bad_calls:
        with pytest.raises(ValueError):
            solution.simulate_batching(*args)


def test_same_arrival_keeps_list_order_not_id_order(solution):
    trace = [_req("zeta", 0, 1, 2), _req("alpha", 0, 1, 1), _req("mid", 1, 1, 1), _req("beta", 1, 1, 3)]
    for policy, finish in (
        ("continuous", {"zeta": 2, "alpha": 3, "mid": 4, "beta": 7}),
        ("static", {"zeta": 2, "alpha": 3, "mid": 4, "beta": 7}),
    ):
        result = solution.simulate_batching(trace, 1, 10, policy)
        _check(
            result,
            f"{policy}, 1 slot, same arrivals listed out of id order",
            steps=7,
            generated=7,
            finish=finish,
            latency={rid: t - {"zeta": 0, "alpha": 0, "mid": 1, "beta": 1}[rid] for rid, t in finish.items()},
        )


def test_several_requests_are_admitted_in_one_step(solution):
    trace = [_req("a", 0, 2, 3), _req("b", 0, 2, 3), _req("c", 0, 2, 3), _req("d", 3, 2, 1), _req("e", 3, 2, 1)]
    result = solution.simulate_batching(trace, 3, 100, "continuous")
    _check(
        result,
        "continuous, 3 slots, three requests waiting at step 0 and two at step 3",
        steps=4,
        generated=11,
        finish={"a": 3, "b": 3, "c": 3, "d": 4, "e": 4},
        latency={"a": 3, "b": 3, "c": 3, "d": 1, "e": 1},
    )


def test_static_batch_takes_requests_arriving_as_it_forms(solution):
    trace = [_req("a", 0, 1, 2), _req("b", 2, 1, 2), _req("c", 2, 1, 1), _req("d", 3, 1, 1)]
    result = solution.simulate_batching(trace, 3, 100, "static")
    _check(
        result,
        "static, 3 slots, requests arriving exactly when a batch ends",
        steps=5,
        generated=6,
        finish={"a": 2, "b": 4, "c": 3, "d": 5},
        latency={"a": 2, "b": 2, "c": 1, "d": 2},
    )


def test_zero_output_request_frees_its_slot_at_once(solution):
    trace = [_req("a", 0, 1, 3), _req("z", 0, 1, 0), _req("b", 0, 1, 1), _req("c", 1, 1, 1)]
    result = solution.simulate_batching(trace, 2, 100, "continuous")
    # z takes the second slot and gives it back at once: b runs in step 0, c in step 1.
    _check(
        result,
        "continuous, 2 slots, a zero-output request beside a running one",
        steps=3,
        generated=5,
        finish={"a": 3, "z": 0, "b": 1, "c": 2},
        latency={"a": 3, "z": 0, "b": 1, "c": 1},
    )


def test_the_callers_trace_is_left_as_it_was(solution):
    # Out of arrival order, with an extra key: a copy may be sorted or annotated, the caller's list may not.
    trace = [_req("late", 5, 2, 3), _req("early", 0, 4, 1), _req("mid", 2, 1, 2)]
    trace[1]["note"] = "kept"
    before = copy.deepcopy(trace)
    for policy in ("continuous", "static"):
        solution.simulate_batching(trace, 2, 10, policy)
        assert_arguments_unchanged(solution, f"simulate_batching ({policy})")
        assert_equal(trace, before, f"the caller's trace after simulate_batching ({policy})")


def test_result_types(solution):
    trace = [_req("a", 0, 1, 2), _req("b", 0, 1, 2)]
    for policy in ("continuous", "static"):
        result = solution.simulate_batching(trace, 2, 10, policy)
        assert type(result["steps"]) is int, f"{policy}: steps is {type(result['steps']).__name__}; the rules ask for an int"
        assert type(result["generated_tokens"]) is int, f"{policy}: generated_tokens is {type(result['generated_tokens']).__name__}; the rules ask for an int"
        assert type(result["throughput"]) is float, f"{policy}: throughput is {type(result['throughput']).__name__} {result['throughput']!r}; the rules ask for a float"
        assert_close(result["throughput"], 2.0, what=f"{policy}: throughput of two 2-token requests run side by side")
    empty = solution.simulate_batching([], 1, 1)
    assert type(empty["throughput"]) is float, f"empty trace: throughput is {type(empty['throughput']).__name__}; the rules ask for 0.0"


def test_spellings_and_number_types_raise(solution):
    good = [_req("a", 0, 2, 2)]
    bad_calls = [
        (good, 2, 10, "Continuous"),
        (good, 2, 10, "STATIC"),
        (good, 2, 10, ""),
        (good, 2.0, 10, "continuous"),
        (good, True, 10, "continuous"),
        (good, 2, 10.0, "static"),
        (good, 2, "10", "static"),
        ([_req("a", 1.0, 2, 2)], 2, 10, "continuous"),
        ([_req("a", 0, 2.5, 2)], 2, 10, "continuous"),
        ([_req("a", 0, 2, True)], 2, 10, "static"),
        ([_req("a", 0, "2", 2)], 2, 10, "static"),
    ]
    for args in bad_calls:
        with pytest.raises(ValueError):
            solution.simulate_batching(*args)


def test_a_bad_request_anywhere_in_the_list_raises(solution):
    trace = [_req(f"r{i}", i, 3, 2) for i in range(30)]
    for bad in (_req("late", 500, 3, -1), _req("r3", 40, 1, 1), _req("huge", 999, 20, 1), _req("neg", 1000, -3, 1)):
        for policy in ("continuous", "static"):
            with pytest.raises(ValueError):
                solution.simulate_batching([*trace, bad], 2, 20, policy)


# ---------------------------------------------------------------------------
# Differential tests: the learner's simulator against the reference on
# generated traces drawn from the whole space of the rules.
# ---------------------------------------------------------------------------


def _random_trace(rng):
    n = rng.choice([0, 1, 1, 2, 3, 5, 8, 12, 20])
    names = rng.sample([f"{p}{i}" for p in ("r", "req-", "x", "Q", "b_") for i in range(40)], n)
    arrival, trace = 0, []
    for name in names:
        arrival += rng.choice([0, 0, 0, 1, 1, 2, 5, 17])
        output = rng.choice([0, 0, 1, 1, 2, 3, 5, 8, 13])
        trace.append(_req(name, arrival, rng.choice([0, 1, 2, 4, 9, 20]), output))
    rng.shuffle(trace) if rng.random() < 0.5 else None
    if rng.random() < 0.2:
        for r in trace:
            r["priority"] = rng.randrange(3)  # an extra key to ignore
    return trace


def _random_limits(rng, trace):
    biggest = max((r["prompt"] + r["output"] for r in trace), default=1)
    total = sum(r["prompt"] + r["output"] for r in trace)
    budget = max(1, rng.choice([biggest, biggest + 1, biggest + rng.randrange(1, 30), max(biggest, total // 2), total + 1]))
    return rng.choice([1, 1, 2, 3, 4, 8]), budget


def _outcome(fn, *args):
    try:
        return ("value", fn(*args))
    except Exception as exc:  # noqa: BLE001 - any exception is an outcome to compare
        return ("raises", type(exc).__name__)


def _compare(got, expected, label):
    if expected[0] == "raises" or got[0] == "raises":
        assert_equal(got, expected, f"{label}: outcome")
        return
    result, want = got[1], expected[1]
    assert_equal(sorted(result), sorted(want), f"{label}: result keys")
    assert type(result["steps"]) is int, f"{label}: steps must be an int, got {result['steps']!r}"
    assert type(result["throughput"]) is float, f"{label}: throughput must be a float, got {result['throughput']!r}"
    assert_int(result["steps"], want["steps"], f"{label}: steps", "steps")
    assert_int(result["generated_tokens"], want["generated_tokens"], f"{label}: generated tokens", "tokens")
    assert_close(result["throughput"], want["throughput"], what=f"{label}: throughput")
    assert_equal(result["finish"], want["finish"], f"{label}: finish times")
    assert_equal(result["latency"], want["latency"], f"{label}: latencies")


def test_generated_traces_match_the_reference(solution):
    rng = random.Random(job_seed())
    for case in range(150):
        trace = _random_trace(rng)
        slots, budget = _random_limits(rng, trace)
        for policy in ("continuous", "static"):
            expected = _outcome(reference.simulate_batching, copy.deepcopy(trace), slots, budget, policy)
            got = _outcome(solution.simulate_batching, trace, slots, budget, policy)
            _compare(got, expected, f"case {case}, {policy}, {slots} slots, budget {budget}, trace {trace}")


def test_generated_bad_input_raises_like_the_reference(solution):
    rng = random.Random(job_seed() + 1)
    for case in range(80):
        trace = _random_trace(rng) or [_req("only", 0, 1, 1)]
        slots, budget = _random_limits(rng, trace)
        policy = rng.choice(["continuous", "static"])
        kind = rng.randrange(6)
        victim = rng.choice(trace)
        if kind == 0:
            victim[rng.choice(["arrival", "prompt", "output"])] = rng.choice([-1, -7, 1.0, 2.5, True, "3", None])
        elif kind == 1:
            trace.append(dict(rng.choice(trace), arrival=rng.randrange(100)))  # a duplicate id
        elif kind == 2:
            trace.append(_req("too-big", rng.randrange(1000), budget, 1))
        elif kind == 3:
            slots = rng.choice([0, -1, 2.0, True, "2", None])
        elif kind == 4:
            budget = rng.choice([0, -5, float(budget), "64", None])
        else:
            policy = rng.choice(["Continuous", "STATIC", "dynamic", "", None, "static "])
        expected = _outcome(reference.simulate_batching, copy.deepcopy(trace), slots, budget, policy)
        got = _outcome(solution.simulate_batching, trace, slots, budget, policy)
        _compare(got, expected, f"case {case}, {policy!r}, {slots!r} slots, budget {budget!r}, trace {trace}")
