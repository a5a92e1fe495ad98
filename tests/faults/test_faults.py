"""Faults on the real stack: a killed worker, a restarted Redis, Docker gone,
no workers at all. A submission is never lost and never graded twice."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from exercises.models import Rung
from grader import services
from grader.constants import Kind, Outcome, Status
from grader.models import Submission

pytestmark = [pytest.mark.worker, pytest.mark.redis, pytest.mark.docker]

KV = Path(__file__).resolve().parents[2] / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"
REFERENCE = (KV / "reference.py").read_text()


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, log: Callable[[], str] | None = None) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}" + (f"\nworker log:\n{log()}" if log else ""))


def status_of(pk: int) -> tuple[str, str, int]:
    row = Submission.objects.values_list("status", "outcome", "attempts").get(pk=pk)
    return row[0], row[1], row[2]


def test_a_worker_killed_mid_job_grades_the_submission_exactly_once_when_back(kv_rung, learner, worker_factory):
    worker = worker_factory(name="crashy@test").start()
    submission = services.submit_solution(user=learner, rung=kv_rung, kind=Kind.SUBMIT, code=REFERENCE)
    wait_for(lambda: status_of(submission.pk)[0] == Status.RUNNING, 60, "the job to start", worker.log)
    worker.kill()
    time.sleep(1)
    assert status_of(submission.pk)[0] == Status.RUNNING  # nobody finished it

    worker.start()  # the same worker name comes back and recovers its claim
    wait_for(lambda: status_of(submission.pk)[0] == Status.DONE, 120, "the job to be graded", worker.log)
    status, outcome, attempts = status_of(submission.pk)
    assert outcome == Outcome.PASSED
    assert attempts == 2
    submission.refresh_from_db()
    assert submission.test_results.count() == len({test.name for test in submission.test_results.all()}) > 0
    assert learner.progress.get().attempts == 1  # graded once, counted once

    # A late redelivery of the original message finds nothing to claim.
    assert services.grade_submission(submission.pk) is None
    assert status_of(submission.pk) == (status, outcome, attempts)


def test_jobs_queued_before_a_redis_restart_are_all_graded(kv_rung, django_user_model, worker_factory, redis_server):
    learners = [django_user_model.objects.create_user(username=f"r{n}", password="a-long-password-1") for n in range(3)]
    submissions = [services.submit_solution(user=user, rung=kv_rung, kind=Kind.RUN, code=REFERENCE) for user in learners]
    redis_server.restart()  # no persistence: the three queued messages are gone

    worker = worker_factory(name="sweeper@test", beat=True).start(GRADER_QUEUED_STALE_S="1", GRADER_SWEEP_EVERY_S="1")
    pks = [submission.pk for submission in submissions]
    wait_for(lambda: all(status_of(pk)[0] == Status.DONE for pk in pks), 120, f"submissions {pks}", worker.log)
    assert [status_of(s.pk)[1] for s in submissions] == [Outcome.PASSED] * 3


def test_with_docker_unavailable_the_job_waits_retries_and_says_so(kv_rung, learner, worker_factory, client):
    broken = worker_factory(name="nodocker@test").start(DOCKER_HOST="unix:///tmp/no-docker-here.sock", GRADER_MAX_ATTEMPTS="20")
    submission = services.submit_solution(user=learner, rung=kv_rung, kind=Kind.SUBMIT, code=REFERENCE)
    wait_for(lambda: Submission.objects.filter(pk=submission.pk, error_code="docker_unavailable", status=Status.QUEUED).exists(), 60, "a retry", broken.log)

    client.force_login(learner)
    state = client.get(f"/submissions/{submission.pk}/state").json()
    assert state["status"] == "queued"
    assert state["message"] == "The grader is unavailable. Retrying."
    assert state["outcome"] == ""
    broken.stop()

    healthy = worker_factory(name="healthy@test").start()
    wait_for(lambda: status_of(submission.pk)[0] == Status.DONE, 120, "grading once Docker is back", healthy.log)
    assert status_of(submission.pk)[1] == Outcome.PASSED
    assert learner.progress.get().attempts == 1  # the failed tries never counted


def test_the_web_app_keeps_answering_while_no_worker_runs(kv_rung, learner, client, redis_url, transactional_db):
    client.force_login(learner)
    assert client.get("/modules/inference-and-serving/").status_code == 200
    page = client.get("/rungs/kv-cache-size/")
    assert page.status_code == 200
    response = client.post("/rungs/kv-cache-size/run", {"code": REFERENCE, "version": kv_rung.current_version.number})
    assert response.status_code == 202
    state = client.get(response.json()["state_url"]).json()
    assert state["status"] == "queued" and state["queue_position"] == 1


def test_a_worker_killed_mid_rejudge_finishes_the_rejudge_when_back(kv_rung, learner, admin_user, worker_factory):
    from grader import rejudge
    from grader.models import Rejudge, RejudgeResult

    version = kv_rung.current_version
    graded = Submission.objects.create(
        user=learner, rung=kv_rung, rung_version=version, kind=Kind.SUBMIT, code=REFERENCE, status=Status.DONE, outcome=Outcome.FAILED, seed=7
    )
    worker = worker_factory(name="rejudger@test").start()
    batch = rejudge.start_rejudge(Submission.objects.filter(pk=graded.pk), target=Rejudge.Target.ORIGINAL, user=admin_user)
    result = batch.results.get()

    def status() -> str:
        return str(RejudgeResult.objects.values_list("status", flat=True).get(pk=result.pk))

    wait_for(lambda: status() == Status.RUNNING, 60, "the rejudge to start", worker.log)
    worker.kill()
    time.sleep(1)
    assert status() == Status.RUNNING  # nobody finished it

    worker.start()  # the same worker name comes back and recovers its claim
    wait_for(lambda: status() == Status.DONE, 180, "the rejudge to finish", worker.log)
    result.refresh_from_db()
    assert (result.new_outcome, result.attempts) == (Outcome.PASSED, 2)
    assert rejudge.rejudge_state(batch)["changed"] == [result]
    # A late redelivery of the original message finds nothing to claim.
    assert rejudge.rejudge_one(result.pk) is None


def test_a_worker_killed_mid_check_finishes_the_check_when_back(catalog, admin_user, worker_factory):
    from authoring import services as authoring_services
    from authoring.models import RungCheck
    from exercises.models import Module

    draft = authoring_services.draft_from_version(Module.objects.get(slug="inference-and-serving"), Rung.objects.get(slug="kv-cache-size"))
    # A small rung whose every job takes at least a second: the Check is
    # surely mid-way when the worker dies, and done in seconds, not minutes.
    draft.reference_code = "def add(a, b):\n    return a + b\n"
    draft.starter_code = "def add(a, b):\n    raise NotImplementedError\n"
    draft.visible_tests = "def test_small(solution):\n    assert solution.add(2, 3) == 5\n"
    draft.hidden_tests = "import time\n\n\ndef test_slow_sum(solution):\n    time.sleep(1)\n    assert solution.add(-4, 10) == 6\n"
    draft.wrong_solutions = {
        "subtracts.py": {"description": "Subtracts when a is negative.", "code": "def add(a, b):\n    return a - b if a < 0 else a + b\n"},
        "doubles.py": {"description": "Doubles a when it is negative.", "code": "def add(a, b):\n    return 2 * a if a < 0 else a + b\n"},
        "first.py": {"description": "Returns a when it is negative.", "code": "def add(a, b):\n    return a if a < 0 else a + b\n"},
    }
    draft.hidden_test_meta = {"test_slow_sum": {"description": "A sum with a negative first number.", "visibility": "hidden"}}
    draft.equivalent_mutants = []
    draft.save()
    worker = worker_factory(name="checker@test").start()
    check = authoring_services.request_check(draft, admin_user)

    def status() -> str:
        return str(RungCheck.objects.values_list("status", flat=True).get(pk=check.pk))

    wait_for(lambda: status() == Status.RUNNING, 60, "the Check to start", worker.log)
    time.sleep(2)  # well into its sandbox jobs
    worker.kill()
    time.sleep(1)
    assert status() == Status.RUNNING

    worker.start()
    wait_for(lambda: status() == Status.DONE, 400, "the Check to finish", worker.log)
    check.refresh_from_db()
    # Finished by the worker's second life, with every fact stated (whether the
    # sandbox proved them on a loaded machine is test_check_real_stack's concern).
    assert check.attempts == 2 and check.error == ""
    assert "the reference passes every hidden test" in {fact["claim"] for fact in check.facts}
    assert authoring_services.run_check(check.pk) is None
