"""Speed boards, predictions and the dashboard's figures (issue 60, items 7 and 8).

A measured Submit moves the learner's standing on (per machine kind, the
CPU model read by the worker, never the report); a board shows each
learner's best passing ratio under a chosen name or anonymously; a rung
may ask for a prediction, shown beside the measurement.
"""

from __future__ import annotations

from typing import Any

import pytest

from grader import messages, results, services, speed_board
from grader.constants import Kind, Outcome
from grader.exceptions import SubmissionRejected
from grader.models import BoardName, SpeedPrediction, SpeedStanding, Submission
from sandbox.jobs import CaseResult, SpeedFacts, planned_tests
from sandbox.report import parse_machine
from sandbox.testing import FakeRunner, job_result

CPU: dict[str, Any] = {"device": "CPU (x86_64)", "gpu": False, "host_cpu": "AMD EPYC 7B13 64-Core Processor"}
GPU: dict[str, Any] = {"device": "NVIDIA H100 80GB HBM3", "gpu": True, "host_cpu": "Intel Xeon"}


@pytest.fixture
def speed_rung(catalog: Any) -> Any:
    from exercises.models import Rung

    return Rung.objects.select_related("current_version").get(slug="batched-kv-gather")


def _asks_for_prediction(rung: Any, mode: str) -> None:
    version = rung.current_version
    version.speed = {**version.speed, "section": {**version.speed["section"], "predict": mode}}
    version.save(update_fields=["speed"])


def _submit(rung: Any, user: Any, ratio: float, verdict: str = "pass", machine: dict[str, Any] | None = None, prediction: float | None = None) -> Submission:
    hidden = planned_tests(rung.current_version.hidden_tests)
    facts = SpeedFacts(verdict, target=1.5, ratio=ratio, ci_low=ratio * 0.95, ci_high=ratio * 1.05, confidence=0.99, rounds=9, phase_s=3.0)
    result = job_result(Outcome.PASSED, [CaseResult(name=name, outcome="passed") for name in hidden], speed=facts, machine=dict(machine or CPU))
    submission = services.submit_solution(user=user, rung=rung, kind=Kind.SUBMIT, code="x = 1\n", prediction=prediction)
    services.grade_submission(submission.pk, runner=FakeRunner(result))
    submission.refresh_from_db()
    return submission


def test_the_machine_kind_is_the_gpu_name_else_the_workers_cpu_model() -> None:
    assert speed_board.machine_kind(GPU) == "NVIDIA H100 80GB HBM3"
    assert speed_board.machine_kind(CPU) == "AMD EPYC 7B13 64-Core Processor"
    assert speed_board.machine_kind({"device": "CPU (x86_64)", "gpu": False}) == "CPU (x86_64)"
    assert speed_board.machine_kind({}) == speed_board.MACHINE_UNKNOWN


def test_the_result_line_names_the_cpu_model_on_a_cpu_only() -> None:
    assert results.machine_line(CPU) == "CPU (x86_64) · AMD EPYC 7B13 64-Core Processor"
    assert results.machine_line(GPU) == "NVIDIA H100 80GB HBM3"


def test_a_report_cannot_name_the_cpu_the_worker_reads() -> None:
    # The harness's report is read through parse_machine: a host_cpu there is dropped.
    assert "host_cpu" not in parse_machine({"device": "CPU (x86_64)", "host_cpu": "Fastest CPU Ever"})


def test_the_best_passing_ratio_stays_and_a_failing_one_never_enters_the_board(speed_rung: Any, learner: Any) -> None:
    _submit(speed_rung, learner, 4.0)
    _submit(speed_rung, learner, 2.5)
    _submit(speed_rung, learner, 9.0, verdict="ambiguous")
    standing = SpeedStanding.objects.get(user=learner, rung=speed_rung)
    assert (standing.best_ratio, standing.measured_ratio, standing.machine) == (4.0, 9.0, CPU["host_cpu"])


def test_each_machine_kind_has_its_own_board(speed_rung: Any, learner: Any) -> None:
    _submit(speed_rung, learner, 3.0)
    _submit(speed_rung, learner, 30.0, machine=GPU)
    boards = {board.machine: board for board in speed_board.speed_boards(speed_rung, viewer=learner)}
    assert {machine: [row.ratio for row in board.rows] for machine, board in boards.items()} == {GPU["device"]: [30.0], CPU["host_cpu"]: [3.0]}


def test_learners_are_anonymous_unless_they_chose_a_name(speed_rung: Any, learner: Any, other_learner: Any, django_user_model: Any) -> None:
    third = django_user_model.objects.create_user("third-learner", password="x")
    _submit(speed_rung, learner, 2.0)
    _submit(speed_rung, other_learner, 5.0)
    _submit(speed_rung, third, 3.0)
    speed_board.set_board_name(third, "Kernel Fan")
    board = speed_board.speed_board(speed_rung, CPU["host_cpu"], viewer=learner)
    assert [(row.rank, row.name, row.you) for row in board.rows] == [
        (1, messages.BOARD_ANONYMOUS, False), (2, "Kernel Fan", False), (3, messages.BOARD_YOU, True),
    ]  # fmt: skip
    assert other_learner.username not in {row.name for row in board.rows}
    # A course's staff see usernames on their own course's board.
    roster = speed_board.speed_board(speed_rung, CPU["host_cpu"], names="roster")
    assert [row.name for row in roster.rows] == [other_learner.username, "third-learner", learner.username]


def test_the_viewer_below_the_top_rows_sees_their_own_rank(speed_rung: Any, learner: Any, other_learner: Any) -> None:
    _submit(speed_rung, other_learner, 5.0)
    _submit(speed_rung, learner, 2.0)
    board = speed_board.speed_board(speed_rung, CPU["host_cpu"], viewer=learner, size=1)
    assert [row.ratio for row in board.rows] == [5.0] and board.own is not None
    assert (board.own.rank, board.own.name, board.entries) == (2, messages.BOARD_YOU, 2)


def test_a_board_name_cannot_be_another_learners_name_or_username(learner: Any, other_learner: Any) -> None:
    speed_board.set_board_name(learner, "Fast One")
    assert speed_board.board_name_taken(other_learner, "fast one")
    assert speed_board.board_name_taken(other_learner, learner.username.upper())
    assert not speed_board.board_name_taken(learner, "Fast One")
    speed_board.set_board_name(learner, "")
    assert not BoardName.objects.filter(user=learner).exists()


def test_a_rung_that_requires_a_prediction_refuses_a_submit_without_one(speed_rung: Any, learner: Any) -> None:
    _asks_for_prediction(speed_rung, "required")
    with pytest.raises(SubmissionRejected, match="predict the speed-up"):
        services.submit_solution(user=learner, rung=speed_rung, kind=Kind.SUBMIT, code="x = 1\n")
    with pytest.raises(SubmissionRejected, match="number from"):
        services.submit_solution(user=learner, rung=speed_rung, kind=Kind.SUBMIT, code="x = 1\n", prediction=float("nan"))
    # A Run is never asked.
    services.submit_solution(user=learner, rung=speed_rung, kind=Kind.RUN, code="x = 1\n")
    assert not Submission.objects.filter(kind=Kind.SUBMIT).exists()


def test_a_prediction_is_shown_beside_the_measurement_and_the_first_one_is_kept(speed_rung: Any, learner: Any) -> None:
    _asks_for_prediction(speed_rung, "optional")
    first = _submit(speed_rung, learner, 4.0, prediction=2.0)
    assert "You predicted 2x; it measured 4.00x: 2.00 times faster than you predicted." in first.message
    _submit(speed_rung, learner, 6.0, prediction=6.0)
    standing = SpeedStanding.objects.get(user=learner, rung=speed_rung)
    assert (standing.predicted, standing.predicted_measured) == (2.0, 4.0)


def test_a_rung_that_asks_for_no_prediction_keeps_none(speed_rung: Any, learner: Any) -> None:
    submission = _submit(speed_rung, learner, 4.0, prediction=2.0)
    assert not SpeedPrediction.objects.filter(submission=submission).exists()
    assert "You predicted" not in submission.message


def test_the_dashboard_counts_measured_ratios_and_prediction_misses(speed_rung: Any, learner: Any, other_learner: Any) -> None:
    _asks_for_prediction(speed_rung, "optional")
    _submit(speed_rung, learner, 4.0, prediction=4.2)
    _submit(speed_rung, other_learner, 1.2, verdict="fail", prediction=10.0)
    figures = speed_board.speed_figures(speed_rung)
    assert figures is not None and figures.measured == 2 and figures.predicted == 2
    assert {b.words: b.learners for b in figures.ratio_bins if b.learners} == {"3x to 5x": 1, "1x to 1.5x": 1}
    assert {b.words: b.learners for b in figures.miss_bins if b.learners} == {"within 1.25x of the prediction": 1, "over 4x slower than predicted": 1}
    assert figures.within == 0.5


def test_a_rung_without_speed_has_no_figures(kv_rung: Any) -> None:
    assert speed_board.speed_figures(kv_rung) is None


def test_rung_yaml_accepts_only_the_two_ways_of_asking_for_a_prediction(speed_rung: Any) -> None:
    from pydantic import ValidationError

    from exercises.schema import Speed

    section = dict(speed_rung.current_version.speed["section"])
    assert Speed.model_validate({**section, "predict": "required"}).predict == "required"
    assert Speed.model_validate(section).predict is None
    with pytest.raises(ValidationError, match="predict"):
        Speed.model_validate({**section, "predict": "always"})
