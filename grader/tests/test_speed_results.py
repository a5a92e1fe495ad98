"""A speed-graded Submit's measurement as it is stored and worded (issue 60).

Only a pass at the target passes the Submit; a fail, an ambiguous measurement
and a refused one each fail it with their own sentence, the ambiguous one
saying that it is no verdict.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from grader import messages, services
from grader.constants import Kind, Outcome
from grader.models import Submission
from sandbox.jobs import CaseResult, SpeedFacts, planned_tests
from sandbox.testing import FakeRunner, job_result

MEASURED: dict[str, Any] = {
    "ratio": 3.4567,
    "ci_low": 3.1,
    "ci_high": 3.9,
    "confidence": 0.998,
    "rounds": 12,
    "learner_s": 0.0123456,
    "baseline_s": 0.05,
    "cpu_checked": True,
    "phase_s": 2.6,
}


def _submit(rung: Any, learner: Any, speed: SpeedFacts | None) -> Submission:
    hidden = planned_tests(rung.current_version.hidden_tests)
    result = job_result(Outcome.PASSED, [CaseResult(name=name, outcome="passed") for name in hidden], speed=speed)
    submission = services.submit_solution(user=learner, rung=rung, kind=Kind.SUBMIT, code="x = 1\n")
    services.grade_submission(submission.pk, runner=FakeRunner(result))
    submission.refresh_from_db()
    return submission


def test_a_pass_at_the_target_passes_with_the_ratio_and_its_interval(kv_rung: Any, learner: Any) -> None:
    submission = _submit(kv_rung, learner, SpeedFacts("pass", target=3.0, **MEASURED))
    assert submission.outcome == Outcome.PASSED
    assert "3.46x the baseline (3.10x to 3.90x at 99.8% confidence); the target is at least 3x the baseline's speed" in submission.message
    stored = submission.timings["speed"]
    assert (stored["verdict"], stored["ratio"], stored["learner_s"], stored["phase_s"]) == ("pass", 3.46, 0.0123, 3)


@pytest.mark.parametrize(
    ("facts", "said"),
    [
        (SpeedFacts("fail", target=5.0, **MEASURED), "not fast enough: 3.46x the baseline"),
        (
            SpeedFacts("ambiguous", reason="budget", target=0.8, **MEASURED),
            "could not decide within its time budget whether your code reaches the target (within 1.25x of the reference's time); so far 3.46x",
        ),
        (SpeedFacts("ambiguous", reason="budget", target=3.0), "This is not a verdict on your code"),
        (SpeedFacts("refused", reason="wrong_output", target=3.0), messages.SPEED_REFUSED["wrong_output"]),
        (SpeedFacts("refused", reason="", target=3.0), messages.SPEED_REFUSED_UNKNOWN),
    ],
)
def test_any_other_verdict_fails_the_submit_and_says_which(kv_rung: Any, learner: Any, facts: SpeedFacts, said: str) -> None:
    submission = _submit(kv_rung, learner, facts)
    assert submission.outcome == Outcome.FAILED
    assert said in submission.message
    assert submission.timings["speed"]["verdict"] == facts.verdict


def test_a_submit_without_a_speed_phase_keeps_no_speed_record(kv_rung: Any, learner: Any) -> None:
    submission = _submit(kv_rung, learner, None)
    assert submission.outcome == Outcome.PASSED and "speed" not in submission.timings


# A Submit every test passed and only the speed phase failed: its summary line says so, never
# "Some tests failed." (the sentence of a failed test), and its history entry names the verdict.
SPEED_ONLY = [
    (SpeedFacts("fail", target=5.0, **MEASURED), "fail"),
    (SpeedFacts("ambiguous", reason="budget", target=3.0), "ambiguous"),
    (SpeedFacts("refused", reason="wrong_output", target=3.0), "refused"),
]


@pytest.mark.parametrize(("facts", "verdict"), SPEED_ONLY)
def test_the_summary_of_a_submit_failed_only_on_speed_says_every_test_passed(
    kv_rung: Any, learner: Any, client: Any, facts: SpeedFacts, verdict: str
) -> None:
    submission = _submit(kv_rung, learner, facts)
    client.force_login(learner)
    state = client.get(reverse("submission-state", args=[submission.pk])).json()
    assert state["summary"] != messages.OUTCOME_SUMMARY[Outcome.FAILED] and state["summary"].startswith("Every test passed")
    assert (state["outcome"], state["summary"]) == (Outcome.FAILED, messages.SPEED_SUMMARY[verdict])
    assert all(test["outcome"] == "passed" for test in state["tests"])
    attempt = client.get(reverse("rung-history", args=[kv_rung.slug])).json()["attempts"][0]
    assert (attempt["outcome"], attempt["speed"]) == (Outcome.FAILED, messages.SPEED_NOTE[verdict])


def test_a_passing_submit_and_a_failed_test_keep_their_summaries(kv_rung: Any, learner: Any, client: Any) -> None:
    passed = _submit(kv_rung, learner, SpeedFacts("pass", target=3.0, **MEASURED))
    client.force_login(learner)
    assert client.get(reverse("submission-state", args=[passed.pk])).json()["summary"] == messages.OUTCOME_SUMMARY[Outcome.PASSED]
    assert client.get(reverse("rung-history", args=[kv_rung.slug])).json()["attempts"][0]["speed"] == ""
    # A test that failed says so, speed record or not (a speed phase runs only after every test passed).
    assert messages.outcome_summary(Outcome.FAILED, {}) == messages.OUTCOME_SUMMARY[Outcome.FAILED]
    assert messages.outcome_summary(Outcome.FAILED, {"speed": {"verdict": "pass"}}) == messages.OUTCOME_SUMMARY[Outcome.FAILED]
    assert messages.outcome_summary(Outcome.TIMEOUT, {"speed": {"verdict": "fail"}}) == messages.OUTCOME_SUMMARY[Outcome.TIMEOUT]
    assert messages.speed_note(Outcome.PASSED, {"speed": {"verdict": "pass"}}) == ""
