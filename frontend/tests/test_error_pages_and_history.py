"""The 403 and 404 pages are in the site's layout; the attempt history pages
and scores each attempt; the workspace links the next rung (issue 18)."""

from __future__ import annotations

import pytest
from django.test import Client

from exercises.models import Rung
from frontend.services import HISTORY_LAST_PAGE, HISTORY_PAGE
from grader.constants import Kind, Outcome, Status
from grader.models import Submission, SubmissionTestResult

pytestmark = pytest.mark.sqlite_pass


def test_a_forbidden_page_is_styled_in_the_sites_layout(kv_rung, learner_client):
    response = learner_client.get("/author/")
    assert response.status_code == 403
    page = response.content.decode()
    assert 'class="topbar"' in page and "site.css" in page and "You cannot open this page" in page


def test_a_missing_page_is_styled_in_the_sites_layout(kv_rung, learner_client):
    response = learner_client.get("/rungs/no-such-rung/")
    assert response.status_code == 404
    page = response.content.decode()
    assert 'class="topbar"' in page and "There is nothing here" in page


def test_an_expired_form_says_so_in_the_sites_layout(kv_rung, learner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(learner)
    response = client.post("/accounts/logout/")
    assert response.status_code == 403 and "This form has expired" in response.content.decode()


def test_the_history_pages_newest_first_with_each_attempts_score(kv_rung, learner, learner_client):
    version = kv_rung.current_version
    made = []
    for n in range(HISTORY_PAGE + 2):
        submission = Submission.objects.create(
            user=learner, rung=kv_rung, rung_version=version, kind=Kind.RUN, code=f"n = {n}\n", status=Status.DONE, outcome=Outcome.FAILED
        )
        for order, outcome in enumerate(["passed"] * n + ["failed"]):
            SubmissionTestResult.objects.create(submission=submission, order=order, name=f"test_{order}", outcome=outcome)
        made.append(submission.pk)
    first = learner_client.get("/rungs/kv-cache-size/history").json()
    assert [a["id"] for a in first["attempts"]] == made[::-1][:HISTORY_PAGE]
    assert first["next_page"] == 2
    newest = first["attempts"][0]
    assert (newest["passed"], newest["total"]) == (HISTORY_PAGE + 1, HISTORY_PAGE + 2)
    second = learner_client.get("/rungs/kv-cache-size/history?page=2").json()
    assert [a["id"] for a in second["attempts"]] == made[::-1][HISTORY_PAGE:]
    assert second["next_page"] is None
    assert learner_client.get("/rungs/kv-cache-size/history?page=abc").json()["page"] == 1


def test_attempts_are_numbered_per_learner_and_rung_not_by_global_id(kv_rung, learner, other_learner, learner_client):
    """Issue 59, item 7: another learner's attempts in between leave no gaps (#1, #2, #3), on every page."""
    version = kv_rung.current_version
    for n in range(HISTORY_PAGE + 2):
        for user in (learner, other_learner):
            Submission.objects.create(user=user, rung=kv_rung, rung_version=version, kind=Kind.RUN, code=f"n = {n}\n", status=Status.DONE,
                                      outcome=Outcome.FAILED)
    first = learner_client.get("/rungs/kv-cache-size/history").json()["attempts"]
    second = learner_client.get("/rungs/kv-cache-size/history?page=2").json()["attempts"]
    assert [a["number"] for a in first + second] == list(range(HISTORY_PAGE + 2, 0, -1))


def test_a_history_page_far_past_the_last_is_empty_not_a_server_error(kv_rung, learner, learner_client):
    version = kv_rung.current_version
    Submission.objects.create(user=learner, rung=kv_rung, rung_version=version, kind=Kind.RUN, code="n = 1\n", status=Status.DONE, outcome=Outcome.FAILED)
    # The first overflowed the database's OFFSET (a 500); the second is the
    # first page the service no longer asks the database for.
    for page in ("9999999999999999999999999", str(HISTORY_LAST_PAGE + 1), str(HISTORY_LAST_PAGE)):
        response = learner_client.get(f"/rungs/kv-cache-size/history?page={page}")
        assert response.status_code == 200, (page, response.status_code)
        assert response.json()["attempts"] == [] and response.json()["next_page"] is None
    assert len(learner_client.get("/rungs/kv-cache-size/history?page=1").json()["attempts"]) == 1


def test_the_workspace_links_the_next_rung_and_the_module(kv_rung, learner_client):
    later = Rung.objects.filter(module=kv_rung.module, current_version__isnull=False, order__gt=kv_rung.order).order_by("order").first()
    assert later is not None
    page = learner_client.get("/rungs/kv-cache-size/").content.decode()
    assert f'id="next-rung" href="/rungs/{later.slug}/"' in page
    assert f'id="back-to-module" href="/modules/{kv_rung.module.slug}/"' in page
    assert 'data-max-bytes="65536"' in page


def test_a_regrade_is_shown_on_the_module_page_and_on_the_attempt(kv_rung, learner, admin_user, learner_client, enqueued):
    from grader import rejudge, services
    from grader.models import Rejudge
    from sandbox.testing import FakeRunner, job_result

    submission = services.submit_solution(user=learner, rung=kv_rung, kind=Kind.SUBMIT, code="x = 1\n")
    services.grade_submission(submission.pk, runner=FakeRunner(job_result("passed")))
    batch = rejudge.start_rejudge([Submission.objects.get(pk=submission.pk)], target=Rejudge.Target.CURRENT, user=admin_user)
    rejudge.rejudge_one(batch.results.get().pk, runner=FakeRunner(job_result("failed")))
    rejudge.apply_rejudge(batch, admin_user)

    module = learner_client.get(f"/modules/{kv_rung.module.slug}/").content.decode()
    assert f"Regraded against version {kv_rung.current_version.number}: passed → failed (your solve stands)" in module
    state = learner_client.get(f"/submissions/{submission.pk}/state").json()
    assert state["regraded"] == {"version": kv_rung.current_version.number, "old_outcome": "passed", "new_outcome": "failed"}
    history = learner_client.get("/rungs/kv-cache-size/history").json()
    assert history["attempts"][0]["regraded"]["new_outcome"] == "failed"
    assert learner_client.get("/rungs/kv-cache-size/reference").status_code == 200, "the reference stays unlocked"
