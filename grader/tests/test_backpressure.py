from __future__ import annotations

import pytest

from grader import lifecycle, services
from grader.constants import Kind, Status
from grader.exceptions import GraderBusy, SubmissionInFlight, SubmissionRejected, SubmissionThrottled
from grader.models import Submission


@pytest.fixture(autouse=True)
def no_queue(enqueued):
    return enqueued


def test_a_new_run_replaces_a_queued_one(kv_rung, learner, no_queue, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        first = services.submit_solution(user=learner, rung=kv_rung, kind=Kind.RUN, code="a = 1\n")
        second = services.submit_solution(user=learner, rung=kv_rung, kind=Kind.RUN, code="a = 2\n")
    assert second.pk == first.pk
    assert Submission.objects.get().code == "a = 2\n"
    assert len(no_queue) == 1


def test_a_submit_waits_for_the_run_in_flight(kv_rung, learner):
    services.submit_solution(user=learner, rung=kv_rung, kind=Kind.RUN, code="a = 1\n")
    with pytest.raises(SubmissionInFlight) as excinfo:
        services.submit_solution(user=learner, rung=kv_rung, kind=Kind.SUBMIT, code="a = 1\n")
    assert excinfo.value.http_status == 409
    assert Submission.objects.count() == 1


def test_a_run_cannot_start_while_one_is_running(kv_rung, learner):
    running = services.submit_solution(user=learner, rung=kv_rung, kind=Kind.RUN, code="a = 1\n")
    assert lifecycle.claim(lifecycle.SUBMISSIONS, running.pk)
    with pytest.raises(SubmissionInFlight):
        services.submit_solution(user=learner, rung=kv_rung, kind=Kind.RUN, code="a = 2\n")
    assert Submission.objects.get().code == "a = 1\n"


def test_other_learners_are_not_blocked(kv_rung, learner, other_learner):
    services.submit_solution(user=learner, rung=kv_rung, kind=Kind.SUBMIT, code="a = 1\n")
    services.submit_solution(user=other_learner, rung=kv_rung, kind=Kind.SUBMIT, code="a = 1\n")
    assert Submission.objects.filter(status=Status.QUEUED).count() == 2


def test_the_rate_limit_refuses_with_a_wait_time(kv_rung, learner, settings):
    settings.GRADER_RATE_LIMIT_PER_MIN = 3
    for n in range(3):
        done = services.submit_solution(user=learner, rung=kv_rung, kind=Kind.SUBMIT, code=f"a = {n}\n")
        Submission.objects.filter(pk=done.pk).update(status=Status.DONE, outcome="failed")
    with pytest.raises(SubmissionThrottled) as excinfo:
        services.submit_solution(user=learner, rung=kv_rung, kind=Kind.SUBMIT, code="a = 9\n")
    assert excinfo.value.http_status == 429
    assert excinfo.value.retry_after_s is not None and 1 <= excinfo.value.retry_after_s <= 60
    assert "Try again in" in str(excinfo.value)
    assert Submission.objects.count() == 3


def test_a_full_queue_answers_busy_instead_of_growing(kv_rung, learner, other_learner, settings, django_user_model):
    settings.GRADER_MAX_QUEUED = 2
    settings.GRADER_SECONDS_PER_JOB_ESTIMATE = 5.0
    settings.GRADER_WORKER_SLOTS = 2
    for n in range(2):
        user = django_user_model.objects.create_user(username=f"u{n}", password="x-long-password-1")
        services.submit_solution(user=user, rung=kv_rung, kind=Kind.SUBMIT, code="a = 1\n")
    with pytest.raises(GraderBusy) as excinfo:
        services.submit_solution(user=learner, rung=kv_rung, kind=Kind.SUBMIT, code="a = 1\n")
    assert excinfo.value.http_status == 503 and "busy" in str(excinfo.value)
    # Nothing measured yet: two queued jobs over two slots at the estimated 5 s a job.
    assert excinfo.value.retry_after_s == 5
    # Runs and Submits share the worker slots, so the bound counts both.
    with pytest.raises(GraderBusy):
        services.submit_solution(user=other_learner, rung=kv_rung, kind=Kind.RUN, code="a = 1\n")
    assert Submission.objects.count() == 2


def test_runs_submits_and_gpu_work_have_separate_queues(kv_rung, settings):
    version = kv_rung.current_version
    assert services.queue_for(version, Kind.RUN) == "run"
    assert services.queue_for(version, Kind.SUBMIT) == "submit"
    settings.SANDBOX_GPU_ENABLED = True
    version.gpu = True
    assert services.queue_for(version, Kind.RUN) == "gpu"


@pytest.mark.parametrize(
    ("code", "status"),
    [("x" * (64 * 1024 + 1), 413), ("a = 1\x00", 400), ("a = '\udcff'", 400)],  # over the limit, NUL, not UTF-8
)
def test_bad_code_is_refused_and_nothing_is_stored(kv_rung, learner, code, status):
    with pytest.raises(SubmissionRejected) as excinfo:
        services.submit_solution(user=learner, rung=kv_rung, kind=Kind.RUN, code=code)
    assert excinfo.value.http_status == status  # as the Run form answers (frontend/tests/test_refusal_sentences.py)
    assert Submission.objects.count() == 0
