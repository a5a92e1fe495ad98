from __future__ import annotations

import pytest

from grader.constants import Kind, Status

# Also run in `make test`'s SQLite pass (the embedded default).
pytestmark = pytest.mark.sqlite_pass


def test_a_second_job_while_one_is_in_flight_is_refused_with_409(kv_rung, learner, learner_client, make_submission):
    make_submission(learner, kind=Kind.SUBMIT, status=Status.RUNNING)
    response = learner_client.post("/rungs/kv-cache-size/submit", {"code": "x = 1\n", "version": kv_rung.current_version.number})
    assert response.status_code == 409
    assert response.json()["error"]


def test_an_accepted_job_comes_with_its_state_and_live_urls(kv_rung, learner_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        response = learner_client.post("/rungs/kv-cache-size/run", {"code": "x = 1\n", "version": kv_rung.current_version.number})
    assert response.status_code == 202
    data = response.json()
    assert data["state_url"] == f"/submissions/{data['id']}/state"
    assert data["events_url"].startswith("/events/") and len(data["events_url"]) > len("/events/") + 20
