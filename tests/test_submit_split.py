"""bench.experiments.submit_split's arithmetic: phases from event times, and the summary's ratios."""

from __future__ import annotations

from typing import Any

from bench.experiments.submit_split import phases_of, summarize


def test_a_submit_has_a_rerun_phase_and_a_run_does_not() -> None:
    submit = phases_of({"running": 10.02, "rerun": 10.3}, started=10.0, ended=10.8)
    assert submit == {"total_s": 0.8, "setup_s": 0.02, "first_run_s": 0.28, "rerun_s": 0.5}
    run = phases_of({"running": 5.01}, started=5.0, ended=5.1)
    assert run == {"total_s": 0.1, "setup_s": 0.01, "first_run_s": 0.09}


def _jobs(total: float, rerun: float | None, replayed: int) -> list[dict[str, Any]]:
    one: dict[str, Any] = {"total_s": total, "setup_s": 0.02, "first_run_s": total - 0.02 - (rerun or 0), "tests": 20, "replayed": replayed}
    if rerun is not None:
        one["rerun_s"] = rerun
    return [one, {**one, "total_s": total + 0.1}, {**one, "total_s": total - 0.1}]


def test_the_summary_weighs_runs_and_submits_alike_and_names_the_rerun_share() -> None:
    sandbox = {
        "kv/run": {"jobs": _jobs(0.1, None, 0), "user_s_per_job": 0.04, "kernel_s_per_job": 0.06},
        "kv/submit": {"jobs": _jobs(0.6, 0.3, 20), "user_s_per_job": 0.4, "kernel_s_per_job": 0.2},
    }
    floor = {"kv/run": [0.1, 0.12, 0.08], "kv/submit": [0.2, 0.3, 0.25]}
    found = summarize(sandbox, floor)
    run, submit = found["jobs"]["kv/run"], found["jobs"]["kv/submit"]
    assert "rerun_s" not in run and run["container_vs_floor"] == 1.0 and run["kernel_share"] == 0.6
    assert submit["rerun_share"] == 0.5 and submit["rerun_s_per_replayed_test"] == 0.015
    assert submit["container_cpu_s"] == 0.6 and submit["floor_cpu_s"] == 0.25 and submit["container_vs_floor"] == 2.4
    assert found["container_cpu_s_per_job"] == 0.35 and found["floor_cpu_s_per_job"] == 0.175
    assert found["floor_vs_container_cpu"] == 0.5 and found["kernel_share_of_container_cpu"] == round(0.26 / 0.7, 2)
    assert found["submit_rerun_share_median"] == 0.5 and found["rerun_s_per_replayed_test_median"] == 0.015


def test_a_submit_that_replayed_nothing_has_no_cost_per_replayed_test() -> None:
    sandbox = {"kv/submit": {"jobs": _jobs(0.6, 0.3, 0), "user_s_per_job": 0.4, "kernel_s_per_job": 0.2}}
    found = summarize(sandbox, {"kv/submit": [0.3]})
    assert found["jobs"]["kv/submit"]["rerun_s_per_replayed_test"] is None
    assert found["rerun_s_per_replayed_test_median"] is None
