"""Visible tests: the worked example trace from the instructions."""

from grading import assert_close, assert_equal, assert_int

TRACE = [
    {"id": "A", "arrival": 0, "prompt": 4, "output": 4},
    {"id": "B", "arrival": 0, "prompt": 2, "output": 1},
    {"id": "C", "arrival": 0, "prompt": 6, "output": 2},
    {"id": "D", "arrival": 1, "prompt": 3, "output": 2},
]


def _check(result, steps, throughput, finish, latency, label):
    assert_equal(sorted(result), ["finish", "generated_tokens", "latency", "steps", "throughput"], f"{label}: result keys")
    assert_int(result["steps"], steps, f"{label}: steps", "steps")
    assert_int(result["generated_tokens"], 9, f"{label}: generated tokens", "tokens")
    assert_close(result["throughput"], throughput, what=f"{label}: throughput (tokens per step)")
    assert_equal(result["finish"], finish, f"{label}: finish times")
    assert_equal(result["latency"], latency, f"{label}: latencies")


def test_worked_example_continuous(solution):
    result = solution.simulate_batching(TRACE, max_slots=2, kv_budget=16, policy="continuous")
    _check(result, 5, 1.8, {"A": 4, "B": 1, "C": 3, "D": 5}, {"A": 4, "B": 1, "C": 3, "D": 4}, "continuous, 2 slots, budget 16")


def test_worked_example_static(solution):
    result = solution.simulate_batching(TRACE, max_slots=2, kv_budget=16, policy="static")
    _check(result, 6, 1.5, {"A": 4, "B": 1, "C": 6, "D": 6}, {"A": 4, "B": 1, "C": 6, "D": 5}, "static, 2 slots, budget 16")
