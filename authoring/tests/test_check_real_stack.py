"""A Check through the real queue: Redis, a Celery worker process, the Docker sandbox."""

from __future__ import annotations

import time

import pytest

from authoring import services
from authoring.models import RungCheck
from exercises.models import Module, Rung

pytestmark = [pytest.mark.worker, pytest.mark.redis, pytest.mark.docker]


def _wait(check: RungCheck, seconds: float = 0) -> RungCheck:
    from django.conf import settings

    seconds = seconds or settings.AUTHORING_CHECK_HARD_TIME_LIMIT_S + 30
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        check.refresh_from_db()
        if check.status == "done":
            return check
        time.sleep(0.5)
    raise AssertionError(f"the Check did not finish in {seconds} s: {check.status}")


def test_a_check_of_the_shipped_kv_rung_runs_on_a_worker_and_proves_every_fact(catalog, worker, admin_user):
    module = Module.objects.get(slug="inference-and-serving")
    draft = services.draft_from_version(module, Rung.objects.get(slug="kv-cache-size"))
    draft.save()
    check = _wait(services.request_check(draft, admin_user))
    assert check.ok, (check.error, check.facts)
    claims = {fact["claim"] for fact in check.facts}
    assert "the reference passes every hidden test" in claims and "wrong/forgets_values.py fails at least one hidden test" in claims
    assert all("tests passed" in fact["evidence"] for fact in check.facts if fact["claim"].startswith("the reference"))
    assert services.draft_state(draft)["check_fresh"]


def test_a_rejudge_runs_through_the_normal_queue_and_keeps_the_outcome_when_nothing_changed(catalog, worker, learner, admin_user):
    from pathlib import Path

    from django.conf import settings

    from grader import rejudge
    from grader import services as grader_services
    from grader.models import Rejudge, Submission

    rung = Rung.objects.get(slug="kv-cache-size")
    wrong = (Path(settings.EXERCISES_DIR) / "llm-systems-frontier/inference-and-serving/rungs/01-kv-cache-size/wrong/forgets_values.py").read_text()
    submission = grader_services.submit_solution(user=learner, rung=rung, kind="submit", code=wrong)
    deadline = time.monotonic() + 240
    while Submission.objects.get(pk=submission.pk).status != "done":
        assert time.monotonic() < deadline, "not graded in time"
        time.sleep(0.5)
    batch = rejudge.start_rejudge(Submission.objects.filter(pk=submission.pk), target=Rejudge.Target.ORIGINAL, user=admin_user)
    while not rejudge.rejudge_state(batch)["finished"]:
        assert time.monotonic() < deadline, "not rejudged in time"
        time.sleep(0.5)
    result = batch.results.get()
    assert (result.old_outcome, result.new_outcome) == ("failed", "failed")
    assert [t["name"] for t in result.new_tests if t["outcome"] != "passed"] == [t["name"] for t in result.old_tests if t["outcome"] != "passed"]
    assert rejudge.apply_rejudge(batch, admin_user) == 0
