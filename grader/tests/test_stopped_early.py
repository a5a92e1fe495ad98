"""A job stopped by a limit says where it was stuck and lists every test,
those it never reached as not run (issue 18); a Run's time limit is shorter
than a Submit's."""

from __future__ import annotations

from exercises.jobs import job_for
from exercises.models import Rung, RungVersion
from grader import messages, services
from grader.constants import Kind, Outcome
from grader.models import Submission
from sandbox.interface import EventCallback
from sandbox.jobs import CaseResult, Failure, Job, JobResult, planned_tests
from sandbox.testing import FakeRunner, job_result


def _version(rung: Rung) -> RungVersion:
    assert rung.current_version is not None
    return rung.current_version


def _graded(user, rung: Rung, kind: str, result) -> Submission:
    submission = services.submit_solution(user=user, rung=rung, kind=kind, code="x = 1\n")
    services.grade_submission(submission.pk, runner=FakeRunner(result))
    return Submission.objects.get(pk=submission.pk)


def test_a_run_stuck_in_a_test_names_it_and_lists_the_others_as_not_run(catalog, learner, enqueued):
    rung = Rung.objects.select_related("current_version").get(slug="kv-cache-size")
    names = planned_tests(_version(rung).visible_tests)
    assert len(names) >= 3
    tests = [CaseResult(name=names[0], outcome="passed"), CaseResult(name=names[1], outcome="timeout")]
    submission = _graded(learner, rung, Kind.RUN, job_result("timeout", tests, limit=15.0))

    assert submission.outcome == Outcome.TIMEOUT
    assert submission.message.startswith("Your code did not finish within the 15 s time limit.")
    assert messages.STUCK_IN_TEST.format(name=names[1]) in submission.message
    rows = list(submission.test_results.values_list("name", "outcome", "message"))
    assert [name for name, _, _ in rows] == names
    assert rows[1][1:] == ("timeout", messages.TEST_TIMED_OUT)
    assert all(outcome == "skipped" and message == messages.NOT_RUN for _, outcome, message in rows[2:])


def test_a_run_stuck_while_loading_blames_no_test(catalog, learner, enqueued):
    rung = Rung.objects.select_related("current_version").get(slug="kv-cache-size")
    names = planned_tests(_version(rung).visible_tests)
    first = CaseResult(name=names[0], outcome="timeout")
    submission = _graded(learner, rung, Kind.RUN, job_result("timeout", [first], stopped="loading", limit=15.0))

    assert submission.message == messages.LIMIT_HIT["timeout", "loading"].format(limit=15) and "stuck in" not in submission.message
    assert submission.message.startswith("Your code did not finish loading within the 15 s time limit")
    rows = list(submission.test_results.all())
    assert [row.outcome for row in rows] == ["timeout"] + ["skipped"] * (len(names) - 1)
    assert rows[0].message == messages.TEST_TIMED_OUT_LOADING


def test_a_timeout_with_no_report_lists_every_test_as_not_run(catalog, learner, enqueued):
    rung = Rung.objects.select_related("current_version").get(slug="kv-cache-size")
    submission = _graded(learner, rung, Kind.RUN, job_result("timeout", [], limit=15.0))
    assert messages.STUCK_UNKNOWN in submission.message
    assert submission.test_results.count() == len(planned_tests(_version(rung).visible_tests))


def test_a_submit_that_ran_out_of_memory_lists_the_hidden_tests_it_never_reached(catalog, learner, enqueued):
    rung = Rung.objects.select_related("current_version").get(slug="kv-cache-size")
    hidden = planned_tests(_version(rung).hidden_tests)
    submission = _graded(learner, rung, Kind.SUBMIT, job_result("memory_limit", [CaseResult(name=hidden[0], outcome="passed")]))
    rows = list(submission.test_results.all())
    assert [row.name for row in rows] == hidden
    # No test reported the kill (the container itself was killed): the first one without a result was running.
    assert all(row.hidden for row in rows) and [row.outcome for row in rows[1:]] == ["failed"] + ["skipped"] * (len(hidden) - 2)
    assert messages.MEMORY_IN_TEST.format(name=hidden[1]) in submission.message


def test_a_submit_stopped_by_the_memory_limit_names_the_test_and_keeps_the_others(catalog, learner, enqueued):
    """Issue 59, item 5: the test whose process was killed is named, in the summary and on its row
    (its author's description first), and the results before it stay as they were."""
    rung = Rung.objects.select_related("current_version").get(slug="kv-cache-size")
    version = _version(rung)
    hidden = planned_tests(version.hidden_tests)
    killed = CaseResult(name=hidden[1], outcome="failed", duration_s=1.5, failure=Failure(code="learner_died", signal=9))
    submission = _graded(learner, rung, Kind.SUBMIT, job_result("memory_limit", [CaseResult(name=hidden[0], outcome="passed"), killed]))
    assert submission.message == messages.MEMORY_IN_TEST.format(name=hidden[1])
    rows = list(submission.test_results.all())
    assert [(row.name, row.outcome) for row in rows[:2]] == [(hidden[0], "passed"), (hidden[1], "failed")]
    assert rows[1].message == f"{version.hidden_description(hidden[1])}\n\n{messages.TEST_HIT_MEMORY}"
    assert [row.outcome for row in rows[2:]] == ["skipped"] * (len(hidden) - 2)


class _KilledAfterReporting(FakeRunner):
    """The container was killed by the memory limit after it had reported two tests live: no report."""

    def run(self, job: Job, on_event: EventCallback | None = None) -> JobResult:
        names = planned_tests(next(iter(job.tests.values())))
        assert on_event is not None
        for name in names[:2]:
            on_event("test", {"name": name, "outcome": "passed", "duration_s": 0.1, "message": ""})
        return job_result("memory_limit", [])


def test_a_container_killed_by_the_memory_limit_keeps_the_results_it_reported_live(catalog, learner, enqueued):
    rung = Rung.objects.select_related("current_version").get(slug="kv-cache-size")
    names = planned_tests(_version(rung).visible_tests)
    submission = services.submit_solution(user=learner, rung=rung, kind=Kind.RUN, code="x = 1\n")
    services.grade_submission(submission.pk, runner=_KilledAfterReporting())
    submission.refresh_from_db()
    assert [row.outcome for row in submission.test_results.all()] == ["passed", "passed", "failed"] + ["skipped"] * (len(names) - 3)
    assert messages.MEMORY_IN_TEST.format(name=names[2]) in submission.message


def test_a_run_gets_a_shorter_time_limit_than_a_submit(catalog, settings):
    version = _version(Rung.objects.get(slug="kv-cache-size"))
    settings.GRADER_RUN_TIME_S = 7
    assert job_for(version, Kind.RUN, "x = 1\n").limits.time_s == 7
    assert job_for(version, Kind.SUBMIT, "x = 1\n").limits.time_s == version.limits.get("time_s", 30) > 7
