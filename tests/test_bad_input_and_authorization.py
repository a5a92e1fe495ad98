"""Bad input gets a clear 4xx and stores nothing; nobody reads what is not theirs;
hidden tests and references are reachable through no URL before passing."""

from __future__ import annotations

from pathlib import Path

from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from exercises.models import Rung
from grader.models import Submission

ROOT = Path(__file__).resolve().parents[1]
KV = ROOT / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"


def post_run(client: Client, kv: Rung, **data: object):
    fields = {"code": "x = 1\n", "version": kv.current_version.number, **data}  # type: ignore[union-attr]
    return client.post("/rungs/kv-cache-size/run", fields)


# --- bad input ----------------------------------------------------------------


def test_code_over_the_size_limit_is_refused_clearly(kv_rung, learner_client):
    response = post_run(learner_client, kv_rung, code="#" * (64 * 1024 + 1))
    assert response.status_code == 413  # Payload Too Large: the workspace words it
    assert "the limit is 65,536 bytes" in response.json()["error"]
    assert Submission.objects.count() == 0


def test_bytes_that_are_not_utf8_are_refused(kv_rung, learner_client):
    body = f"code=%FF%FE&version={kv_rung.current_version.number}"
    response = learner_client.post("/rungs/kv-cache-size/run", body, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400 and "UTF-8" in response.json()["error"]
    assert Submission.objects.count() == 0


def test_nul_bytes_are_refused(kv_rung, learner_client):
    response = post_run(learner_client, kv_rung, code="x = 1\x00\n")
    assert response.status_code == 400 and "NUL" in response.json()["error"]
    assert Submission.objects.count() == 0


def test_an_unknown_rung_is_404(kv_rung, learner_client):
    assert learner_client.post("/rungs/no-such-rung/run", {"code": "x", "version": 1}).status_code == 404
    assert learner_client.post("/rungs/kv-cache-size/rejudge", {"code": "x", "version": 1}).status_code == 404
    assert Submission.objects.count() == 0


def test_a_stale_rung_version_is_409_with_a_reason(kv_rung, learner_client):
    response = post_run(learner_client, kv_rung, version=kv_rung.current_version.number + 7)
    assert response.status_code == 409 and "Reload" in response.json()["error"]
    assert Submission.objects.count() == 0


def test_a_missing_csrf_token_is_403(kv_rung, learner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(learner)
    assert post_run(client, kv_rung).status_code == 403
    assert Submission.objects.count() == 0


def test_forged_form_fields_are_ignored_or_refused(kv_rung, learner_client, learner, other_learner):
    assert post_run(learner_client, kv_rung, version="not-a-number").status_code == 400
    response = post_run(learner_client, kv_rung, user=other_learner.pk, user_id=other_learner.pk, status="done", outcome="passed")
    assert response.status_code == 202
    submission = Submission.objects.get()
    assert (submission.user_id, submission.status, submission.outcome) == (learner.pk, "queued", "")


def test_anonymous_visitors_cannot_submit(kv_rung, client):
    response = post_run(client, kv_rung)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert Submission.objects.count() == 0


# --- authorization --------------------------------------------------------------

# Every URL that carries an id, and the test that proves a stranger cannot use it.
URLS_WITH_IDS = {
    "submissions/<int:pk>/state": "test_another_learners_submission_is_404",
    "submissions/<int:pk>/cancel": "grader.tests.test_cancel.test_only_the_learner_who_sent_it_can_cancel_it",
    "events/<str:channel>": "test_another_learners_live_channel_is_404",
    "mentor/modules/<slug:slug>/questions": "mentor.tests.test_staff_view",
    "admin/": "test_the_admin_is_closed_to_learners",
    # The API's own ids (jobs) are proved in api/tests/test_what_a_learner_sees.py, by token.
    "api/tokens/<int:pk>/revoke": "api.tests.test_tokens.test_one_learner_cannot_revoke_another_s_token",
}


def _routes(patterns: list[URLPattern | URLResolver], prefix: str = "") -> list[str]:
    routes = []
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            if route == "admin/":
                routes.append(route)
                continue
            routes += _routes(pattern.url_patterns, route)
        else:
            routes.append(route)
    return routes


def test_every_url_carrying_an_id_has_an_authorization_test():
    carrying = [route for route in _routes(get_resolver().url_patterns) if ("<int:" in route or "<str:channel" in route or "questions" in route or route == "admin/")]
    carrying = [route for route in carrying if not route.startswith("author/")]  # authoring has its own persona tests
    # Every courses URL has its entry in courses/tests/test_authorization_matrix.py (each course role, course A against course B).
    carrying = [route for route in carrying if not route.startswith("courses/")]
    missing = [route for route in carrying if route not in URLS_WITH_IDS]
    assert not missing, f"add an authorization test for {missing} and list it in URLS_WITH_IDS"


def test_another_learners_submission_is_404(kv_rung, learner, learner_client, other_learner_client):
    post_run(learner_client, kv_rung)
    submission = Submission.objects.get()
    assert learner_client.get(f"/submissions/{submission.pk}/state").status_code == 200
    assert other_learner_client.get(f"/submissions/{submission.pk}/state").status_code == 404


def test_another_learners_live_channel_is_404(kv_rung, learner_client, other_learner_client):
    post_run(learner_client, kv_rung)
    channel = Submission.objects.get().channel
    assert other_learner_client.get(f"/events/{channel}").status_code == 404


def test_the_admin_is_closed_to_learners(kv_rung, learner_client):
    for path in ("/admin/", "/admin/grader/submission/", "/admin/exercises/rungversion/"):
        response = learner_client.get(path)
        assert response.status_code == 302 and "/admin/login/" in response["Location"]


def _secrets() -> list[str]:
    """Lines that appear only in the reference solution and the hidden tests."""
    reference = (KV / "reference.py").read_text()
    hidden = (KV / "test_hidden.py").read_text()
    visible = (KV / "test_visible.py").read_text() + (KV / "starter.py").read_text() + (KV / "instructions.md").read_text()
    lines = [line.strip() for line in (reference + hidden).splitlines()]
    return [line for line in lines if len(line) > 30 and line not in visible and not line.startswith(("#", '"""', "def test_"))][:40]


def test_hidden_tests_and_the_reference_are_on_no_page_or_api_before_passing(kv_rung, learner, learner_client, settings):
    secrets = _secrets()
    assert len(secrets) >= 10
    post_run(learner_client, kv_rung)
    submission = Submission.objects.get()
    bodies = {
        path: learner_client.get(path).content.decode()
        for path in (
            "/",
            "/tracks/llm-systems-frontier/",
            "/modules/inference-and-serving/",
            "/rungs/kv-cache-size/",
            "/rungs/kv-cache-size/history",
            "/rungs/kv-cache-size/draft",
            f"/submissions/{submission.pk}/state",
        )
    }
    assert learner_client.get("/rungs/kv-cache-size/reference").status_code == 403
    for path, body in bodies.items():
        for secret in secrets:
            assert secret not in body, f"{path} leaks {secret!r}"


def test_no_static_file_carries_the_catalog(kv_rung, client):
    from django.contrib.staticfiles import finders

    for finder in finders.get_finders():
        for path, _storage in finder.list([]):
            assert not path.endswith(("reference.py", "test_hidden.py")), path
            assert "wrong/" not in path, path
    assert client.get("/static/exercises/llm-systems-frontier/inference-and-serving/rungs/01-kv-cache-size/reference.py").status_code == 404
