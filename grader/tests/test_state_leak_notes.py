"""A hidden test whose outcome depended on the tests before it is explained
by the grader's own sentence, by which way it went (the harness reports the
fact: sandbox.jobs.JobResult.passes_alone)."""

from __future__ import annotations

from exercises.models import Rung
from grader import messages, services
from grader.constants import Kind
from grader.models import Submission
from sandbox.jobs import CaseResult, planned_tests
from sandbox.testing import FakeRunner, job_result


def test_each_leaky_hidden_test_says_which_way_its_state_went(catalog, learner, enqueued):
    rung = Rung.objects.select_related("current_version").get(slug="kv-cache-size")
    assert rung.current_version is not None
    first, second, third = planned_tests(rung.current_version.hidden_tests)[:3]
    tests = [CaseResult(name=first, outcome="failed", message="assert 0 == 64"), CaseResult(name=second, outcome="failed"), CaseResult(name=third, outcome="passed")]
    result = job_result("failed", tests, state_leaks=[first, second], passes_alone=[first])
    submission = services.submit_solution(user=learner, rung=rung, kind=Kind.SUBMIT, code="x = 1\n")
    services.grade_submission(submission.pk, runner=FakeRunner(result))

    rows = {row.name: row for row in Submission.objects.get(pk=submission.pk).test_results.all()}
    assert rows[first].detail == f"{messages.LEAK_PASSES_ALONE}\n\nassert 0 == 64"
    assert rows[second].detail == messages.LEAK_FAILS_ALONE
    assert rows[third].detail == ""
    assert all(messages.STATE_LEAK_NOTE in rows[name].message for name in (first, second))
