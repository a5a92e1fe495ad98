from __future__ import annotations

import pytest
from django.test import Client

from frontend.models import Draft

# Also run in `make test`'s SQLite pass (the embedded default).
pytestmark = pytest.mark.sqlite_pass

DRAFT_URL = "/rungs/kv-cache-size/draft"


def test_a_saved_draft_loads_back_and_opens_in_the_workspace(kv_rung, learner, learner_client):
    code = "def kv_cache_bytes(config, seq_len):\n    return 42  # my draft <&>\n"
    response = learner_client.post(DRAFT_URL, {"code": code})
    assert response.status_code == 200 and response.json()["saved"] is True

    loaded = learner_client.get(DRAFT_URL)
    assert loaded.status_code == 200
    assert loaded.json()["code"] == code

    page = learner_client.get("/rungs/kv-cache-size/").content.decode()
    assert "return 42  # my draft &lt;&amp;&gt;" in page


def test_saving_again_replaces_the_one_draft(kv_rung, learner, learner_client):
    learner_client.post(DRAFT_URL, {"code": "first = 1\n"})
    learner_client.post(DRAFT_URL, {"code": "second = 2\n"})
    assert Draft.objects.filter(user=learner, rung=kv_rung).count() == 1
    assert learner_client.get(DRAFT_URL).json()["code"] == "second = 2\n"


def test_without_a_draft_the_workspace_opens_with_the_starter(kv_rung, learner_client):
    assert learner_client.get(DRAFT_URL).status_code == 404
    page = learner_client.get("/rungs/kv-cache-size/").content.decode()
    starter_first_line = kv_rung.current_version.starter_code.strip().splitlines()[0]
    assert starter_first_line.replace('"', "&quot;").replace("'", "&#x27;") in page


def test_it_accepts_a_draft_of_exactly_the_size_limit(kv_rung, learner_client):
    assert learner_client.post(DRAFT_URL, {"code": "x" * 64 * 1024}).status_code == 200


def test_it_rejects_a_draft_over_the_size_limit(kv_rung, learner, learner_client):
    learner_client.post(DRAFT_URL, {"code": "kept = True\n"})
    response = learner_client.post(DRAFT_URL, {"code": "é" * (32 * 1024 + 1)})  # 2 bytes each in UTF-8
    assert response.status_code == 413
    assert "the limit is 65,536 bytes" in response.json()["error"]
    assert Draft.objects.get(user=learner, rung=kv_rung).code == "kept = True\n"


def test_saving_a_draft_needs_the_csrf_token(kv_rung, learner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(learner)
    assert client.post(DRAFT_URL, {"code": "x = 1\n"}).status_code == 403
    assert not Draft.objects.exists()


def test_an_anonymous_visitor_has_no_draft(kv_rung, client):
    response = client.post(DRAFT_URL, {"code": "x = 1\n"})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not Draft.objects.exists()
