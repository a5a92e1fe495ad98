"""The API's job state and history word a Submit that only the speed phase failed as the workspace does
(issue 60): every test passed, and which way the speed phase went; the CLI prints the same summary."""

from __future__ import annotations

from typing import Any

from grader import messages, services
from grader.constants import Kind, Outcome
from sandbox.jobs import CaseResult, SpeedFacts, planned_tests
from sandbox.testing import FakeRunner, job_result

from .conftest import TokenClient


def test_a_submit_failed_only_on_speed_says_every_test_passed(kv_rung: Any, learner: Any, learner_api: TokenClient) -> None:
    hidden = planned_tests(kv_rung.current_version.hidden_tests)
    facts = SpeedFacts("ambiguous", reason="budget", target=3.0)
    result = job_result(Outcome.PASSED, [CaseResult(name=name, outcome="passed") for name in hidden], speed=facts)
    submission = services.submit_solution(user=learner, rung=kv_rung, kind=Kind.SUBMIT, code="x = 1\n")
    services.grade_submission(submission.pk, runner=FakeRunner(result))

    state = learner_api.get(f"/jobs/{submission.pk}").json()
    assert (state["outcome"], state["summary"]) == (Outcome.FAILED, messages.SPEED_SUMMARY["ambiguous"])
    attempt = learner_api.get(f"/rungs/{kv_rung.slug}/history").json()["attempts"][0]
    assert attempt["speed"] == messages.SPEED_NOTE["ambiguous"]
