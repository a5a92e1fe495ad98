"""The bench's ceiling on ``burst_vs_floor``: what the stack around the sandbox allows (bench/bench.py).

A graded job of the burst costs its sandbox container at least what the
floor pays for the same tests, plus what the web, the worker, the database
and Redis spend on it. The ceiling is the burst / floor ratio a
sandbox exactly as cheap as the floor would reach with that stack.
"""

from __future__ import annotations

import pytest

from bench import bench
from bench.cpu_split import SANDBOX


def test_cpu_per_job_splits_the_sandbox_from_the_stack_and_leaves_out_the_simulated_learners() -> None:
    seconds = {
        SANDBOX: 40.0,
        "web (gunicorn)": 6.0,
        "grader worker (celery)": 2.0,
        "database": 0.5,
        "redis": 0.25,
        "docker engine": 1.25,  # the sandbox's: left out, which only raises the ceiling
        "other": 3.0,  # the bench's own learners: not the platform's cost
        "learners (locust)": 7.0,
    }
    found = bench.burst_cpu_per_job((30.0, 55.0, seconds), graded=100)
    assert found == {"burst_sandbox_cpu_s_per_job": 0.4, "burst_stack_cpu_s_per_job": 0.0875}


def test_no_sampled_window_or_no_graded_job_gives_no_figure() -> None:
    empty = {"burst_sandbox_cpu_s_per_job": None, "burst_stack_cpu_s_per_job": None}
    assert bench.burst_cpu_per_job(None, graded=100) == empty
    assert bench.burst_cpu_per_job((30.0, 55.0, {SANDBOX: 1.0}), graded=0) == empty


def test_the_ceiling_is_floor_over_floor_plus_stack() -> None:
    # 2 cores at 1,200 jobs/min: 0.1 CPU-s per job. A stack of 0.15 CPU-s per
    # job lets a sandbox as cheap as the floor reach 0.1 / 0.25 of it.
    found = bench.burst_vs_floor_ceiling({"floor_cores": 2, "floor_jobs_per_min": 1200.0, "burst_stack_cpu_s_per_job": 0.15})
    assert found["floor_cpu_s_per_job"] == pytest.approx(0.1)
    assert found["burst_vs_floor_ceiling"] == pytest.approx(0.4)
    # A free stack leaves the whole floor: 1.0.
    assert ceiling(floor_per_min=1200.0, stack=0.0) == 1.0


def test_a_missing_measurement_gives_no_ceiling() -> None:
    assert ceiling(floor_per_min=1200.0, stack=None) is None
    assert ceiling(floor_per_min=0, stack=0.1) is None


def ceiling(floor_per_min: float, stack: float | None) -> float | None:
    found = bench.burst_vs_floor_ceiling({"floor_cores": 2, "floor_jobs_per_min": floor_per_min, "burst_stack_cpu_s_per_job": stack})
    value: float | None = found["burst_vs_floor_ceiling"]
    return value
