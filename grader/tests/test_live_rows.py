"""A running job's test rows are written in batches (grader.live): the page
still sees every test, the worker writes a few times per Submit instead of
once per test, and nothing written live outlasts the final grade."""

from __future__ import annotations

from typing import Any

import pytest

from exercises.models import Rung
from grader import events, lifecycle, live, results, services
from grader.constants import Kind, Outcome, Status
from grader.models import Submission
from sandbox.jobs import CaseResult
from sandbox.testing import FakeRunner, job_result


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def published(monkeypatch: Any) -> list[str]:
    told: list[str] = []
    monkeypatch.setattr(events, "publish_changed", told.append)
    return told


def _submission(learner: Any, kind: str = Kind.SUBMIT) -> Submission:
    rung = Rung.objects.get(slug="kv-cache-size")
    return services.submit_solution(user=learner, rung=rung, kind=kind, code="x = 1\n")


def _claimed(submission: Submission) -> lifecycle.Claim:
    claim = lifecycle.claim(lifecycle.SUBMISSIONS, submission.pk, "live@test")
    assert claim is not None
    return claim


def _live(learner: Any, every_s: float) -> tuple[Submission, Clock, live.LiveTestRows]:
    submission = _submission(learner)
    clock = Clock()
    return submission, clock, live.LiveTestRows(submission, _claimed(submission), every_s=every_s, clock=clock)


def _test(name: str, outcome: str = "passed") -> dict[str, Any]:
    return {"name": name, "outcome": outcome, "duration_s": 0.002, "message": ""}


def _rows(submission: Submission) -> list[tuple[int, str, str]]:
    return list(submission.test_results.order_by("order").values_list("order", "name", "outcome"))


def test_tests_that_end_milliseconds_apart_are_written_together(catalog, learner, enqueued, published):
    submission, clock, rows = _live(learner, 0.25)
    for number in range(20):
        rows.on_event("test", _test(f"test_{number:02d}"))
        clock.now += 0.005
    # The first test shows at once; the other 19 ended within 0.25 s of it.
    assert _rows(submission) == [(1, "test_00", "passed")]
    assert len(published) == 1
    rows.on_event("rerun", {})
    assert [name for _, name, _ in _rows(submission)] == [f"test_{number:02d}" for number in range(20)]
    assert [order for order, _, _ in _rows(submission)] == list(range(1, 21))
    assert (rows.writes, len(published)) == (2, 2)
    rows.on_event("rerun", {})  # nothing held: no write, nobody told
    assert len(published) == 2


def test_a_test_that_ends_after_the_interval_is_written_with_those_held(catalog, learner, enqueued, published):
    submission, clock, rows = _live(learner, 0.25)
    rows.on_event("test", _test("test_a"))
    clock.now += 0.1
    rows.on_event("test", _test("test_b"))
    clock.now += 0.2
    rows.on_event("test", _test("test_c", "failed"))
    assert _rows(submission) == [(1, "test_a", "passed"), (2, "test_b", "passed"), (3, "test_c", "failed")]
    assert len(published) == 2


def test_slow_tests_are_each_written_as_they_end(catalog, learner, enqueued, published):
    submission, clock, rows = _live(learner, 0.25)
    for number in range(4):
        rows.on_event("test", _test(f"test_{number}"))
        assert len(_rows(submission)) == number + 1
        clock.now += 1.0
    assert len(published) == 4


def test_zero_interval_writes_every_test_at_once(catalog, learner, enqueued, published):
    submission = _submission(learner)
    rows = live.LiveTestRows(submission, _claimed(submission), every_s=0.0, clock=Clock())
    for number in range(5):
        rows.on_event("test", _test(f"test_{number}"))
    assert len(_rows(submission)) == 5 and len(published) == 5


def test_a_row_written_before_is_updated_and_a_name_said_twice_keeps_its_last_word(catalog, learner, enqueued, published):
    submission, _clock, rows = _live(learner, 10.0)
    rows.on_event("test", _test("test_a"))
    rows.on_event("test", _test("test_a", "failed"))
    rows.on_event("test", _test("test_b"))
    rows.on_event("test", _test("test_b", "error"))
    rows.on_event("rerun", {})
    assert _rows(submission) == [(2, "test_a", "failed"), (4, "test_b", "error")]


def test_other_events_write_nothing(catalog, learner, enqueued, published):
    submission = _submission(learner)
    rows = live.LiveTestRows(submission, _claimed(submission), every_s=0.25, clock=Clock())
    rows.on_event("container", {"id": "c1"})
    rows.on_event("running", {})
    assert _rows(submission) == [] and published == []


def test_a_graded_submit_tells_its_page_a_few_times_and_ends_with_the_final_grade(catalog, learner, enqueued, published, settings):
    settings.GRADER_LIVE_ROWS_EVERY_S = 0.25
    submission = _submission(learner)
    names = [f"test_case_{number:02d}" for number in range(20)]
    # The final grade differs from what the tests said live: a state leak
    # turned the last test into a failure after the re-run.
    final = [CaseResult(name=name, outcome="passed") for name in names[:-1]] + [CaseResult(name=names[-1], outcome="failed", message="leak")]

    class Runner:
        def run(self, job: Any, on_event: Any = None) -> Any:
            on_event("container", {"id": "c1"})
            on_event("running", {})
            for name in names:
                on_event("test", _test(name))
            on_event("rerun", {})
            return job_result("failed", final)

        def stop(self, container_id: str) -> None:
            pass

    runner = Runner()
    services.grade_submission(submission.pk, runner=runner)
    submission.refresh_from_db()
    assert submission.outcome == Outcome.FAILED
    assert [(name, outcome) for _, name, outcome in _rows(submission)] == [(name, "passed") for name in names[:-1]] + [(names[-1], "failed")]
    # Claimed, the first test, the rest at the re-run's start, the final grade:
    # not one "changed" per test.
    assert len(published) <= 5, published


def test_the_fake_runner_says_when_a_submits_rerun_begins(catalog, learner, enqueued, published):
    seen: list[str] = []
    job = services.build_job(_submission(learner))
    FakeRunner(job_result("passed")).run(job, on_event=lambda kind, data: seen.append(kind))
    # One event per planned test (the placeholder pass stands for them all), then the re-run.
    assert seen == ["container", "running", *["test"] * len(job.planned_tests), "rerun"]


def test_a_write_that_fails_loses_no_grade(catalog, learner, enqueued, published, monkeypatch):
    submission = _submission(learner)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("database gone")

    monkeypatch.setattr(results, "write_live_test_rows", broken)
    rows = live.LiveTestRows(submission, _claimed(submission), every_s=0.0, clock=Clock())
    rows.on_event("test", _test("test_a"))  # logged, not raised: the job goes on
    assert published == [] and rows.writes == 0


@pytest.mark.parametrize("lose", ["cancelled", "reaped"])
def test_a_worker_that_lost_its_claim_writes_no_live_row(catalog, learner, enqueued, published, lose):
    submission, _clock, rows = _live(learner, 0.0)
    rows.on_event("test", _test("test_a"))
    assert _rows(submission) == [(1, "test_a", "passed")]
    if lose == "cancelled":
        services.cancel_submission(submission)
    else:  # the reaper put it back and another worker took it
        Submission.objects.filter(pk=submission.pk).update(status=Status.QUEUED, claimed_by="")
        assert lifecycle.claim(lifecycle.SUBMISSIONS, submission.pk, "other@test") is not None
    before = _rows(submission)
    rows.on_event("test", _test("test_b"))
    rows.on_event("test", _test("test_a", "failed"))
    assert _rows(submission) == before
