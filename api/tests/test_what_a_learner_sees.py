"""No endpoint gives hidden tests, hidden inputs or the reference before a pass;
a token of one learner reaches nothing of another's."""

from __future__ import annotations

import json

from api.local import imported_helpers
from frontend.models import Draft
from grader.constants import Kind, Outcome, Status
from grader.models import Progress, Submission


def _secrets(version) -> list[str]:
    """Lines of the reference and of the hidden tests (the generated inputs are made there), and the hidden tests' descriptions."""
    # Lines the learner may see anyway (the starter, the visible tests, the public grading helpers) are not secrets.
    shown = version.starter_code + version.visible_tests + "".join(imported_helpers(version.visible_tests).values())
    lines = [
        line.strip()
        for source in (version.reference_code, version.hidden_tests)
        for line in source.splitlines()
        if len(line.strip()) > 25 and line.strip() not in shown
    ]
    descriptions = [str(meta["description"]) for meta in version.hidden_test_meta.values() if meta.get("description")]
    return lines + descriptions


def _every_get(api, rung, job_id: int) -> str:
    module = rung.module.slug
    paths = ["/me", "/catalog", f"/modules/{module}", f"/rungs/{rung.slug}", f"/rungs/{rung.slug}/draft", f"/rungs/{rung.slug}/history", f"/jobs/{job_id}", "/courses"]
    bodies = []
    for path in paths:
        response = api.get(path)
        assert response.status_code == 200, (path, response.content)
        bodies.append(json.dumps(response.json()))
    return "\n".join(bodies)


def _submit_row(user, rung, outcome=Outcome.FAILED) -> Submission:
    return Submission.objects.create(
        user=user, rung=rung, rung_version=rung.current_version, kind=Kind.SUBMIT, code="x = 1\n", status=Status.DONE, outcome=outcome
    )


def test_no_endpoint_carries_hidden_tests_or_the_reference_before_a_pass(kv_rung, learner, learner_api):
    version = kv_rung.current_version
    secrets = _secrets(version)
    assert len(secrets) > 10
    Draft.objects.create(user=learner, rung=kv_rung, code=version.starter_code)
    job = _submit_row(learner, kv_rung)
    bodies = _every_get(learner_api, kv_rung, job.pk)
    # The rung's own files really came back: the visible tests, the grading helpers, the conftest.
    files = learner_api.get("/rungs/kv-cache-size").json()["files"]
    assert files["test_visible.py"] == version.visible_tests and "def assert_bytes" in files["grading.py"] and "def solution" in files["conftest.py"]
    leaked = [secret for secret in secrets if secret in bodies]
    assert leaked == []
    locked = learner_api.get("/rungs/kv-cache-size/reference")
    assert locked.status_code == 403 and locked.json()["code"] == "reference_locked"


def test_after_a_pass_the_reference_comes_as_the_workspace_shows_it(kv_rung, learner, learner_api):
    _submit_row(learner, kv_rung, Outcome.PASSED)
    Progress.objects.create(user=learner, rung=kv_rung, best_outcome=Outcome.PASSED, solved_at=kv_rung.current_version.created_at)
    data = learner_api.get("/rungs/kv-cache-size/reference").json()
    assert data["reference"] == kv_rung.current_version.reference_code
    assert {test["name"] for test in data["hidden_tests"]} == set(kv_rung.current_version.hidden_test_meta)
    assert learner_api.get("/rungs/kv-cache-size").json()["solved"] is True


def test_a_token_of_one_learner_reaches_nothing_of_another_s(kv_rung, learner, other_learner, learner_api, other_api):
    Draft.objects.create(user=other_learner, rung=kv_rung, code="omar's draft\n")
    theirs = _submit_row(other_learner, kv_rung, Outcome.PASSED)
    Progress.objects.create(user=other_learner, rung=kv_rung, best_outcome=Outcome.PASSED, solved_at=theirs.enqueued_at)
    assert other_api.get(f"/jobs/{theirs.pk}").status_code == 200  # it is there, for its owner
    assert learner_api.get(f"/jobs/{theirs.pk}").status_code == 404
    assert learner_api.post(f"/jobs/{theirs.pk}/cancel").status_code == 404
    assert learner_api.get("/rungs/kv-cache-size/draft").status_code == 404
    assert learner_api.get("/rungs/kv-cache-size/history").json()["attempts"] == []
    assert learner_api.get("/rungs/kv-cache-size/reference").status_code == 403
    assert learner_api.get("/rungs/kv-cache-size").json()["solved"] is False
    catalog = learner_api.get("/catalog").json()
    assert all(module["solved"] == 0 for track in catalog for module in track["modules"])


def test_a_staff_token_does_not_open_a_learner_s_job(kv_rung, learner, admin_user):
    from .conftest import TokenClient, make_token

    job = _submit_row(learner, kv_rung)
    assert TokenClient(make_token(admin_user).secret).get(f"/jobs/{job.pk}").status_code == 404


def test_an_unpublished_or_unknown_rung_is_a_json_404(kv_rung, learner_api):
    kv_rung.current_version = None
    kv_rung.save(update_fields=["current_version"])
    for path in ("/rungs/kv-cache-size", "/rungs/kv-cache-size/reference", "/rungs/no-such-rung/draft", "/modules/no-such-module", "/jobs/999999"):
        response = learner_api.get(path)
        assert response.status_code == 404 and response.json()["code"] in {"not_found", "no_draft"}, path
