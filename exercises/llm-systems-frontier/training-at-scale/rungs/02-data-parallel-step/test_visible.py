"""Visible tests: the worked example."""

from grading import assert_close, assert_int

TOL = {"rtol": 1e-9, "atol": 1e-12}


def test_ring_allreduce_of_three_gigabytes_on_eight_gpus(solution):
    got = solution.ring_allreduce_seconds(3_000_000_000, 8, 100e9, 10e-6)
    assert_close(got, 0.05264, **TOL, what="seconds to all-reduce 3 GB over 8 GPUs at 100 GB/s, 10 us latency")


def test_step_without_buckets(solution):
    got = solution.data_parallel_step(0.1, 0.2, 3_000_000_000, 8, 100e9, 10e-6)
    assert_close(got["step_s"], 0.35264, **TOL, what="step_s with one all-reduce after the backward pass")
    # A difference of two times: compared within 1e-9 of step_s, as the rules say.
    assert_close(got["exposed_comm_s"], 0.05264, rtol=0.0, atol=1e-9 * 0.35264 + 1e-12, what="exposed_comm_s with one all-reduce")
    assert_int(got["buckets"], 1, "buckets without bucket_bytes")


def test_step_with_25_mb_buckets(solution):
    got = solution.data_parallel_step(0.1, 0.2, 3_000_000_000, 8, 100e9, 10e-6, bucket_bytes=25_000_000)
    assert_close(got["step_s"], 0.3005775, **TOL, what="step_s with 25 MB buckets")
    assert_int(got["buckets"], 120, "buckets of 25 MB in 3 GB")
