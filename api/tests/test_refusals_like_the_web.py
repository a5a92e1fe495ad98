"""Run and Submit by token go through the web's limits and answer them the same way."""

from __future__ import annotations

from grader.constants import Status
from grader.models import Submission


def _code(rung, code="x = 1\n"):
    return {"code": code, "version": rung.current_version.number}


def test_code_over_the_size_limit_is_refused_with_the_web_s_sentence(kv_rung, learner_api, learner_client, settings, enqueued):
    big = "x" * (settings.GRADER_MAX_CODE_BYTES + 1)
    by_token = learner_api.post("/rungs/kv-cache-size/submit", _code(kv_rung, big))
    by_page = learner_client.post("/rungs/kv-cache-size/submit", {"code": big, "version": kv_rung.current_version.number})
    assert (by_token.status_code, by_page.status_code) == (413, 413)
    assert by_token.json()["error"] == by_page.json()["error"] and by_token.json()["code"] == "too_large"
    draft = learner_api.put("/rungs/kv-cache-size/draft", {"code": big})
    assert draft.status_code == 413 and draft.json()["code"] == "too_large"
    assert enqueued == [] and not Submission.objects.exists()


def test_a_run_is_accepted_and_its_state_is_the_workspace_s(kv_rung, learner, learner_api, learner_client, enqueued):
    accepted = learner_api.post("/rungs/kv-cache-size/run", _code(kv_rung))
    assert accepted.status_code == 202, accepted.content
    job = accepted.json()
    assert job["state_url"] == f"/api/v1/jobs/{job['id']}"
    state = learner_api.get(f"/jobs/{job['id']}").json()
    web = learner_client.get(f"/submissions/{job['id']}/state").json()
    assert state["status"] == web["status"] == Status.QUEUED
    assert set(state) == set(web) - {"cancel_url"}


def test_a_second_job_on_the_rung_is_refused_as_in_flight(kv_rung, learner_api, enqueued):
    assert learner_api.post("/rungs/kv-cache-size/submit", _code(kv_rung)).status_code == 202
    again = learner_api.post("/rungs/kv-cache-size/submit", _code(kv_rung))
    assert again.status_code == 409 and again.json()["code"] == "in_flight"


def test_the_cap_on_jobs_in_flight_across_rungs_holds(catalog, learner, learner_api, settings, enqueued):
    from exercises.models import Rung

    settings.GRADER_MAX_JOBS_IN_FLIGHT = 2
    rungs = list(Rung.objects.filter(current_version__isnull=False).select_related("current_version")[:3])
    answers = [learner_api.post(f"/rungs/{rung.slug}/submit", _code(rung)) for rung in rungs]
    assert [answer.status_code for answer in answers] == [202, 202, 429]
    refused = answers[2]
    assert refused.json()["code"] == "too_many_in_flight" and int(refused["Retry-After"]) >= 1


def test_a_stale_version_is_refused_as_changed(kv_rung, learner_api, enqueued):
    stale = {"code": "x = 1\n", "version": kv_rung.current_version.number + 1}
    refused = learner_api.post("/rungs/kv-cache-size/run", stale)
    assert refused.status_code == 409 and refused.json()["code"] == "version_changed"


def test_a_malformed_body_is_a_json_400(kv_rung, learner_api):
    refused = learner_api.post("/rungs/kv-cache-size/run", {"code": 5})
    assert refused.status_code == 400 and refused.json()["code"] == "invalid"
    empty = learner_api.post("/rungs/kv-cache-size/run", _code(kv_rung, "   \n"))
    assert empty.status_code == 400 and empty.json()["code"] == "empty"


def test_a_draft_round_trips(kv_rung, learner_api):
    assert learner_api.put("/rungs/kv-cache-size/draft", {"code": "def f():\n    return 1\n"}).json()["saved"] is True
    assert learner_api.get("/rungs/kv-cache-size/draft").json()["code"] == "def f():\n    return 1\n"
