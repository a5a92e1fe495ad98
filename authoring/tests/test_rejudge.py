"""Rejudging: a fixed hidden test changes a recorded outcome, and the old one is kept."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from authoring import transfer
from exercises.models import Module, Rung, Track
from exercises.services import publish_rung_version
from grader import lifecycle, rejudge
from grader import services as grader_services
from grader.constants import Kind, Outcome, Status
from grader.models import Progress, Rejudge, RejudgeResult, Submission
from sandbox import errors
from sandbox.testing import FakeRunner, job_result

pytestmark = pytest.mark.django_db

BUGGY_HIDDEN = "def test_decimals(solution):\n    assert solution.add(0.1, 0.2) == 0.3\n"
FIXED_HIDDEN = "import math\n\n\ndef test_decimals(solution):\n    assert math.isclose(solution.add(0.1, 0.2), 0.3)\n"
LEARNER_CODE = "def add(a, b):\n    return a + b\n"


class Content:
    title, summary, minutes, difficulty, gpu = "Add", "", 5, "easy", False
    limits: dict[str, Any] = {}
    instructions_md = "Add."
    starter_code = "def add(a, b):\n    raise NotImplementedError\n"
    reference_code = "def add(a, b):\n    return round(a + b, 10)\n"
    visible_tests = "def test_small(solution):\n    assert solution.add(2, 3) == 5\n"
    hidden_test_meta = {"test_decimals": {"description": "Decimal fractions.", "visibility": "hidden"}}
    wrong_solutions: dict[str, Any] = {}

    def __init__(self, hidden: str) -> None:
        self.hidden_tests = hidden


def _publish(rung: Rung, hidden: str) -> None:
    publish_rung_version(rung, transfer.read_rung_files(transfer.rung_files(Content(hidden), rung.slug), rung.slug, rung.order))
    rung.refresh_from_db()


@pytest.fixture
def rung() -> Rung:
    module = Module.objects.create(track=Track.objects.create(slug="basics", title="Basics"), slug="warm-ups", title="Warm-ups")
    made = Rung.objects.create(module=module, slug="add-two", order=1)
    _publish(made, BUGGY_HIDDEN)
    return made


@pytest.fixture
def graded(rung: Rung, learner: Any, in_process_runner: Any) -> Submission:
    """The learner's correct code, failed by v1's too-strict hidden test."""
    submission = grader_services.submit_solution(user=learner, rung=rung, kind=Kind.SUBMIT, code=LEARNER_CODE)
    grader_services.grade_submission(submission.pk, runner=in_process_runner)
    submission.refresh_from_db()
    assert submission.outcome == Outcome.FAILED
    assert Progress.objects.get(user=learner, rung=rung).solved_at is None
    return submission


def _run_all(batch: Rejudge, runner: Any) -> None:
    for result in batch.results.all():
        assert rejudge.rejudge_one(result.pk, runner=runner) is not None
        assert rejudge.rejudge_one(result.pk, runner=runner) is None  # a redelivered task does nothing


def test_a_rejudge_after_fixing_a_hidden_test_changes_the_outcome_and_keeps_the_old_one(
    rung, graded, learner, admin_user, in_process_runner, client, django_capture_on_commit_callbacks, monkeypatch
):
    _publish(rung, FIXED_HIDDEN)
    assert rung.current_version is not None and rung.current_version.number == 2
    queued: list[int] = []
    monkeypatch.setattr(lifecycle, "enqueue", lambda kind, pk, queue: queued.append(pk))

    # Through the admin action, as a reviewer does it.
    client.force_login(admin_user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/admin/grader/submission/", {"action": "rejudge_against_current", "_selected_action": [graded.pk]})
    batch = Rejudge.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/author/rejudges/{batch.pk}/"
    assert len(queued) == 1
    _run_all(batch, in_process_runner)

    # Preview: the change is shown, the submission is untouched.
    page = client.get(f"/author/rejudges/{batch.pk}/").content.decode()
    assert "<strong id=\"changed-count\">1</strong> outcome(s) would change" in page
    graded.refresh_from_db()
    assert graded.outcome == Outcome.FAILED and graded.rung_version.number == 1

    response = client.post(f"/author/rejudges/{batch.pk}/", {"confirm": "on"}, follow=True)
    assert "Recorded 1 new outcome(s)" in response.content.decode()
    graded.refresh_from_db()
    assert graded.outcome == Outcome.PASSED and graded.rung_version.number == 2
    assert [row.outcome for row in graded.test_results.all()] == ["passed"]
    result = RejudgeResult.objects.get()
    assert (result.old_outcome, result.new_outcome, result.applied) == (Outcome.FAILED, Outcome.PASSED, True)
    assert result.old_version.number == 1 and result.old_tests[0]["outcome"] == "failed"
    progress = Progress.objects.get(user=learner, rung=rung)
    assert progress.best_outcome == Outcome.PASSED and progress.solved_at is not None and progress.attempts == 1
    # Applying twice records nothing more.
    assert rejudge.apply_rejudge(batch, admin_user) == 0
    # The submission's admin page shows both grades.
    page = client.get(f"/admin/grader/submission/{graded.pk}/change/").content.decode()
    assert "Rejudges (old and new grades)" in page


def test_a_rejudge_against_the_original_version_changes_nothing(rung, graded, admin_user, in_process_runner):
    _publish(rung, FIXED_HIDDEN)
    batch = rejudge.start_rejudge(Submission.objects.filter(pk=graded.pk), target=Rejudge.Target.ORIGINAL, user=admin_user)
    _run_all(batch, in_process_runner)
    state = rejudge.rejudge_state(batch)
    assert state["finished"] and state["changed"] == []
    assert rejudge.apply_rejudge(batch, admin_user) == 0
    graded.refresh_from_db()
    assert graded.outcome == Outcome.FAILED


def test_an_infrastructure_failure_during_a_rejudge_is_never_applied(rung, graded, admin_user):
    _publish(rung, FIXED_HIDDEN)
    batch = rejudge.start_rejudge([graded], target=Rejudge.Target.CURRENT, user=admin_user)
    _run_all(batch, FakeRunner(job_result("infra_error", error_code=errors.DOCKER_UNAVAILABLE, message="no docker")))
    assert rejudge.apply_rejudge(batch, admin_user) == 0
    graded.refresh_from_db()
    assert graded.outcome == Outcome.FAILED and graded.status == Status.DONE
    assert RejudgeResult.objects.get().new_outcome == Outcome.INFRA_ERROR


def test_applying_before_every_result_is_graded_is_refused(rung, graded, admin_user):
    batch = rejudge.start_rejudge([graded], target=Rejudge.Target.CURRENT, user=admin_user)
    with pytest.raises(ValueError, match="not finished"):
        rejudge.apply_rejudge(batch, admin_user)


def test_the_preview_of_a_big_rejudge_counts_every_result_and_lists_the_changed_ones_first(rung, graded, admin_user, monkeypatch):
    """A rung's rejudge may regrade 100,000 submissions: the page lists a few, the changed first, and counts them all (bench/scale.py)."""
    monkeypatch.setattr(rejudge, "REJUDGE_ROWS_SHOWN", 2)
    copies: list[int] = []
    for _ in range(4):
        graded.pk, graded.channel = None, f"copy-{len(copies)}"
        graded.save()
        copies.append(graded.pk)
    batch = rejudge.start_rejudge(Submission.objects.filter(pk__in=copies), target=Rejudge.Target.CURRENT, user=admin_user)
    RejudgeResult.objects.filter(rejudge=batch).update(status=Status.DONE, new_outcome=Outcome.FAILED)
    moved = RejudgeResult.objects.filter(rejudge=batch).order_by("-pk").first()
    assert moved is not None
    RejudgeResult.objects.filter(pk=moved.pk).update(new_outcome=Outcome.PASSED)

    state = rejudge.rejudge_state(batch)
    assert (state["total"], state["done"], state["finished"], state["changed_count"]) == (4, 4, True, 1)
    assert [result.pk for result in state["changed"]] == [moved.pk]
    assert len(state["results"]) == 2 and state["results"][0].pk == moved.pk

    client = Client()
    client.force_login(admin_user)
    page = client.get(f"/author/rejudges/{batch.pk}/").content.decode()
    assert "<strong>4 of 4</strong>" in page and '<strong id="changed-count">1</strong>' in page
    assert "The 2 listed below are the first, the changed ones first." in page
