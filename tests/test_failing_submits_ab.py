"""bench.experiments.failing_submits_ab's summary: a grade that differs between the two sides is named, never averaged away."""

from __future__ import annotations

from typing import Any

from bench.experiments.failing_submits_ab import failing_jobs, grade_of, summarize


def _entry(cpu_s: float, outcome: str = "failed", leaks: list[str] | None = None, replayed: int = 0) -> dict[str, Any]:
    return {"wall_s": cpu_s + 0.01, "cpu_s": cpu_s, "grade": {"outcome": outcome, "tests": {"test_a": outcome}, "state_leaks": leaks or []}, "replayed": replayed}


def test_the_same_grades_give_ratios_per_job_and_in_total() -> None:
    found = {
        "this": {"kv/one": _entry(0.5, replayed=3), "kv/two": _entry(1.0, replayed=2), "gqa/one": _entry(2.0)},
        "earlier": {"kv/one": _entry(1.0), "kv/two": _entry(1.0), "gqa/one": _entry(2.0)},
    }
    summary = summarize(found, "this", "earlier")
    assert summary["same_grade_on_both_sides"] is True and summary["grades_that_differ"] == []
    assert summary["this_replayed_tests"] == 5 and summary["earlier_replayed_tests"] == 0
    assert summary["this_vs_earlier_cpu_s_total"] == round(3.5 / 4.0, 3)
    assert summary["this_vs_earlier_cpu_s_median_of_ratios"] == 1.0
    assert summary["cpu_s_by_rung"] == {"gqa": {"this": 2.0, "earlier": 2.0}, "kv": {"this": 1.5, "earlier": 2.0}}
    assert summary["outcomes"] == {"failed": 3}


def test_a_lost_state_leak_note_or_another_outcome_is_a_different_grade() -> None:
    found = {
        "this": {"a/leaky": _entry(1.0, leaks=[]), "a/other": _entry(1.0, outcome="error"), "a/same": _entry(1.0)},
        "earlier": {"a/leaky": _entry(1.0, leaks=["test_a"]), "a/other": _entry(1.0), "a/same": _entry(1.0)},
    }
    summary = summarize(found, "this", "earlier")
    assert summary["same_grade_on_both_sides"] is False
    assert summary["grades_that_differ"] == ["a/leaky", "a/other"]


def test_every_shipped_rung_contributes_its_starter_and_wrong_solutions_as_submits() -> None:
    jobs = failing_jobs()
    keys = [key for key, _ in jobs]
    assert len(keys) == len(set(keys)) and len(keys) >= 11 * 4
    assert all(job.mode == "submit" and set(job.tests) == {"test_hidden.py"} and job.reference for _, job in jobs)
    assert {key.split("/", 1)[0] for key in keys} >= {"kv-cache-size", "speculative-decoding", "pipeline-schedule"}
    assert sum(key.endswith("/starter") for key in keys) == len({key.split("/", 1)[0] for key in keys})


def test_the_grade_is_what_the_learner_is_told() -> None:
    class Case:
        def __init__(self, name: str, outcome: str) -> None:
            self.name, self.outcome = name, outcome

    class Result:
        outcome = "failed"
        tests = [Case("test_b", "failed"), Case("test_a", "passed")]
        state_leaks = ["test_b"]

    assert grade_of(Result()) == {"outcome": "failed", "tests": {"test_b": "failed", "test_a": "passed"}, "state_leaks": ["test_b"]}
