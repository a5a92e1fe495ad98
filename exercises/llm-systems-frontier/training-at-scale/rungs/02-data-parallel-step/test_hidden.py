"""Hidden tests: edge cases of the rules, then generated steps against the reference."""

import math
import random

import pytest
import reference
from grading import assert_close, assert_int, job_seed

TOL = {"rtol": 1e-9, "atol": 1e-12}


def _exposed_atol(expected):
    return TOL["rtol"] * abs(expected["step_s"]) + TOL["atol"]


def _check(got, expected, label):
    assert isinstance(got, dict), f"{label}: expected a dict, got {type(got).__name__}"
    assert set(got) == {"step_s", "exposed_comm_s", "buckets"}, f"{label}: keys {sorted(got)}, expected buckets, exposed_comm_s, step_s"
    for key in ("step_s", "exposed_comm_s"):
        assert type(got[key]) is float, f"{label}: {key} is {type(got[key]).__name__}, the rules ask for a float"
    assert_close(got["step_s"], expected["step_s"], **TOL, what=f"{label}: step_s")
    # A difference of two times: its tolerance is relative to step_s, as the rules say.
    assert_close(got["exposed_comm_s"], expected["exposed_comm_s"], rtol=0.0, atol=_exposed_atol(expected), what=f"{label}: exposed_comm_s")
    assert type(got["buckets"]) is int, f"{label}: buckets is {type(got['buckets']).__name__}, the rules ask for an int"
    assert_int(got["buckets"], expected["buckets"], f"{label}: buckets")


def test_one_gpu_needs_no_communication(solution):
    got = solution.ring_allreduce_seconds(10**9, 1, 50e9, 5e-6)
    assert type(got) is float, f"ring_allreduce_seconds returned {type(got).__name__}; the rules ask for a float"
    assert_close(got, 0.0, **TOL, what="all-reduce over a single GPU")
    _check(solution.data_parallel_step(0.5, 1.0, 10**9, 1, 50e9, 5e-6, 10**6), {"step_s": 1.5, "exposed_comm_s": 0.0, "buckets": 1000}, "one GPU, 1,000 buckets")


def test_volume_approaches_twice_the_buffer(solution):
    # Two GPUs send S; 1,024 GPUs send 2 * 1023/1024 * S.
    assert_close(solution.ring_allreduce_seconds(10**9, 2, 10**9), 1.0, **TOL, what="1 GB over 2 GPUs at 1 GB/s, no latency")
    assert_close(solution.ring_allreduce_seconds(1024 * 10**6, 1024, 10**9), 2 * 1023 * 10**6 / 10**9, **TOL, what="1.024 GB over 1,024 GPUs at 1 GB/s")


def test_latency_is_paid_at_every_ring_step(solution):
    # 64 GPUs: 126 ring steps; a 1-byte buffer is all latency.
    got = solution.ring_allreduce_seconds(1, 64, 1e12, 2e-5)
    assert_close(got, 2 * 63 / 64 / 1e12 + 126 * 2e-5, **TOL, what="a 1-byte all-reduce over 64 GPUs with 20 us latency")


def test_integer_bandwidth_and_zero_latency(solution):
    got = solution.ring_allreduce_seconds(3, 3, 4)
    assert type(got) is float, f"ring_allreduce_seconds with int arguments returned {type(got).__name__}; the rules ask for a float"
    assert_close(got, 2 * 2 / 3 * 3 / 4, **TOL, what="3 bytes over 3 GPUs at 4 bytes/s")


def test_int_times_still_give_floats(solution):
    # Times given as ints on one GPU, so there is nothing to communicate: the results are still floats.
    _check(solution.data_parallel_step(1, 2, 1000, 1, 10), {"step_s": 3.0, "exposed_comm_s": 0.0, "buckets": 1}, "int times on one GPU, no buckets")
    _check(solution.data_parallel_step(0, 3, 1000, 1, 10, 0, 100), {"step_s": 3.0, "exposed_comm_s": 0.0, "buckets": 10}, "int times on one GPU, 10 buckets")
    _check(solution.data_parallel_step(2, 0, 7, 1, 10, 5, 3), {"step_s": 2.0, "exposed_comm_s": 0.0, "buckets": 3}, "int times and latency on one GPU, 3 buckets")


def test_last_bucket_holds_the_remainder(solution):
    # 10 bytes in buckets of 4, 4 and 2, ready at 5, 9 and 11 s; on 2 GPUs at 1 byte/s they take 4, 4 and 2 s.
    got = solution.data_parallel_step(1.0, 10.0, 10, 2, 1.0, 0.0, 4)
    _check(got, {"step_s": 15.0, "exposed_comm_s": 4.0, "buckets": 3}, "10 bytes in buckets of 4")


def test_remainder_bucket_comes_last(solution):
    # 10 bytes in buckets of 4, 4 and 2, ready at 1.8, 2.6 and 3.0 s; on 2 GPUs at 1 byte/s they take 4, 4 and 2 s:
    # 1.8-5.8, 5.8-9.8, 9.8-11.8. The small bucket first (2, 4, 4) would end at 11.4 s.
    got = solution.data_parallel_step(1.0, 2.0, 10, 2, 1.0, 0.0, 4)
    _check(got, {"step_s": 11.8, "exposed_comm_s": 8.8, "buckets": 3}, "10 bytes in buckets of 4, all-reduces slower than the backward pass")


def test_queue_that_forms_at_the_last_bucket(solution):
    # 5 bytes in buckets of 2, 2 and 1 on 4 GPUs at 1 byte/s: each byte takes 1.5 s, and one is produced every 2 s.
    # Ready at 4, 8 and 10 s; all-reduces 4-7, 8-11, then the last waits for the second: 11-12.5.
    got = solution.data_parallel_step(0.0, 10.0, 5, 4, 1.0, 0.0, 2)
    _check(got, {"step_s": 12.5, "exposed_comm_s": 2.5, "buckets": 3}, "the last bucket waits for the one before it")
    # 7 bytes in buckets of 3, 3 and 1 on 2 GPUs: ready at 30/7, 60/7 and 10 s, taking 3, 3 and 1 s.
    got = solution.data_parallel_step(0.0, 10.0, 7, 2, 1.0, 0.0, 3)
    _check(got, {"step_s": 60 / 7 + 4, "exposed_comm_s": 60 / 7 - 6, "buckets": 3}, "7 bytes in buckets of 3")


def test_buckets_of_gradients_past_float_precision(solution):
    # Past 2**53 bytes, grad / bucket in floats can drop the small last bucket; counted in integers it is there.
    for grad, bucket in ((10**17 + 1, 10**17), (2**53 + 1, 2**52), (3 * 10**18 + 7, 10**18), (2**60 + 1, 2**58)):
        got = solution.data_parallel_step(0.1, 0.2, grad, 8, 100e9, 1e-3, bucket)
        _check(got, reference.data_parallel_step(0.1, 0.2, grad, 8, 100e9, 1e-3, bucket), f"{grad:,} bytes of gradients in buckets of {bucket:,}")


def test_bucket_larger_than_the_gradient_is_one_bucket(solution):
    for bucket in (3_000_000_000, 3_000_000_001, 10**12):
        got = solution.data_parallel_step(0.1, 0.2, 3_000_000_000, 8, 100e9, 10e-6, bucket)
        _check(got, {"step_s": 0.35264, "exposed_comm_s": 0.05264, "buckets": 1}, f"bucket_bytes={bucket:,} for 3 GB of gradients")


def test_buckets_queue_when_communication_is_slower(solution):
    # Each 1-byte bucket takes 1 s to all-reduce but a new one is ready every 0.25 s.
    got = solution.data_parallel_step(0.0, 1.0, 4, 2, 1.0, 0.0, 1)
    _check(got, {"step_s": 4.25, "exposed_comm_s": 3.25, "buckets": 4}, "4 one-byte buckets, each slower than the gap between them")


def test_small_buckets_pay_latency_many_times(solution):
    got = solution.data_parallel_step(0.1, 0.2, 3_000_000_000, 8, 100e9, 1e-3, 25_000_000)
    _check(got, reference.data_parallel_step(0.1, 0.2, 3_000_000_000, 8, 100e9, 1e-3, 25_000_000), "120 buckets at 1 ms latency")
    assert got["step_s"] > 1.8, "with 1 ms latency the 120 all-reduces must queue up past 1.8 s"


def test_communication_hidden_except_the_last_bucket(solution):
    got = solution.data_parallel_step(0.05, 0.4, 800_000_000, 16, 200e9, 0.0, 100_000_000)
    last = 2 * 15 / 16 * 100_000_000 / 200e9
    _check(got, {"step_s": 0.45 + last, "exposed_comm_s": last, "buckets": 8}, "8 buckets each faster than the gap")


def test_zero_compute_time(solution):
    _check(solution.data_parallel_step(0, 0, 1000, 4, 1000.0), {"step_s": 1.5, "exposed_comm_s": 1.5, "buckets": 1}, "no compute at all")
    _check(solution.data_parallel_step(0.0, 0.0, 1000, 4, 1000.0, 0.0, 300), {"step_s": 1.5, "exposed_comm_s": 1.5, "buckets": 4}, "no compute, 4 buckets")


def test_bad_sizes_raise(solution):
    for bad in (0, -1, 4.0, True, "4", None):
        with pytest.raises(ValueError):
            solution.ring_allreduce_seconds(bad, 4, 1e9)
        with pytest.raises(ValueError):
            solution.ring_allreduce_seconds(1000, bad, 1e9)
        with pytest.raises(ValueError):
            solution.data_parallel_step(0.1, 0.2, bad, 4, 1e9)
        with pytest.raises(ValueError):
            solution.data_parallel_step(0.1, 0.2, 1000, bad, 1e9)
    for bad in (0, -1, 4.0, True, "4"):
        with pytest.raises(ValueError):
            solution.data_parallel_step(0.1, 0.2, 1000, 4, 1e9, 0.0, bad)


def test_bad_bandwidth_raises(solution):
    for bad in (0, 0.0, -1e9, math.nan, math.inf, True, "1e9", None):
        with pytest.raises(ValueError):
            solution.ring_allreduce_seconds(1000, 4, bad)
        with pytest.raises(ValueError):
            solution.data_parallel_step(0.1, 0.2, 1000, 4, bad)


def test_bad_times_raise(solution):
    for bad in (-1e-9, -1, math.nan, math.inf, -math.inf, True, "0.1", None):
        with pytest.raises(ValueError):
            solution.ring_allreduce_seconds(1000, 4, 1e9, bad)
        with pytest.raises(ValueError):
            solution.data_parallel_step(bad, 0.2, 1000, 4, 1e9)
        with pytest.raises(ValueError):
            solution.data_parallel_step(0.1, bad, 1000, 4, 1e9)
        with pytest.raises(ValueError):
            solution.data_parallel_step(0.1, 0.2, 1000, 4, 1e9, bad)


def test_zero_latency_and_zero_times_are_allowed(solution):
    assert_close(solution.ring_allreduce_seconds(1000, 4, 1e3, 0), 1.5, **TOL, what="latency given as the int 0")
    _check(solution.data_parallel_step(0, 1, 1000, 4, 1e3, 0), {"step_s": 2.5, "exposed_comm_s": 1.5, "buckets": 1}, "forward_s and latency given as int 0")


# ---------------------------------------------------------------------------
# Differential tests against the reference on generated input.
# ---------------------------------------------------------------------------


def _outcome(fn, *args, **kwargs):
    try:
        return ("value", fn(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - any exception is an outcome to compare
        return ("raises", type(exc).__name__)


def _close(a, b):
    return type(a) is float and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _same(got, expected):
    if expected[0] == "raises":
        return got == expected
    if got[0] != "value":
        return False
    value, want = got[1], expected[1]
    if isinstance(want, float):
        return _close(value, want)
    return (
        isinstance(value, dict)
        and set(value) == set(want)
        and _close(value["step_s"], want["step_s"])
        and type(value["exposed_comm_s"]) is float
        and math.isclose(value["exposed_comm_s"], want["exposed_comm_s"], rel_tol=0.0, abs_tol=_exposed_atol(want))
        and type(value["buckets"]) is int
        and value["buckets"] == want["buckets"]
    )


BAD_INTS = [0, -1, 8.0, True, "8", None]
BAD_NUMBERS = [-1e-6, math.nan, math.inf, True, "1", None]


def test_generated_allreduces_match_the_reference(solution):
    rng = random.Random(job_seed())
    mismatches = []
    for case in range(300):
        args = [
            rng.choice([1, 7, 4096, 25_000_000, 3 * 10**9, 10**12 + 3]),
            rng.choice([1, 2, 3, 8, 64, 1000, 16384]),
            rng.choice([1, 3, 25e9, 100e9, 450e9, 9e11]),
            rng.choice([0, 0.0, 1e-6, 5e-6, 3e-5, 1e-3]),
        ]
        if case % 4 == 3:
            which = rng.randrange(4)
            args[which] = rng.choice(BAD_INTS if which < 2 else [0, *BAD_NUMBERS] if which == 2 else BAD_NUMBERS)
        expected = _outcome(reference.ring_allreduce_seconds, *args)
        got = _outcome(solution.ring_allreduce_seconds, *args)
        if not _same(got, expected):
            mismatches.append(f"ring_allreduce_seconds{tuple(args)}: got {got}, expected {expected}")
    assert not mismatches, f"{len(mismatches)} of 300 generated cases differ from the rules; first: {mismatches[0]}"


def test_generated_steps_match_the_reference(solution):
    rng = random.Random(job_seed() + 1)
    mismatches = []
    for case in range(200):
        grad = rng.choice([1, 10, 999, 3_000_000, 250_000_001, 3_000_000_000, 14 * 10**9])
        args = [
            rng.choice([0, 0.0, 0.01, 0.1, 0.35]),
            rng.choice([0, 0.02, 0.2, 0.7, 1.5]),
            grad,
            rng.choice([1, 2, 4, 8, 32, 256]),
            rng.choice([1e6, 12.5e9, 50e9, 100e9, 400e9]),
            rng.choice([0.0, 2e-6, 1e-5, 1e-4, 1e-3]),
            rng.choice([None, None, grad, grad + 1, max(1, grad // rng.choice([1, 2, 3, 7, 40, 150])), max(1, grad // 150 + 1)]),
        ]
        if case % 4 == 3:
            which = rng.randrange(7)
            if which in (2, 3, 6):
                args[which] = rng.choice([x for x in BAD_INTS if x is not None or which != 6])
            elif which == 4:
                args[which] = rng.choice([0, *BAD_NUMBERS])
            else:
                args[which] = rng.choice(BAD_NUMBERS)
        expected = _outcome(reference.data_parallel_step, *args)
        got = _outcome(solution.data_parallel_step, *args)
        if not _same(got, expected):
            mismatches.append(f"data_parallel_step{tuple(args)}: got {got}, expected {expected}")
    assert not mismatches, f"{len(mismatches)} of 200 generated cases differ from the rules; first: {mismatches[0]}"
