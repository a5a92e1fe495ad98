"""Personal access tokens: stored hashed, shown once, refused when revoked, expired, unknown or out of scope."""

from __future__ import annotations

import hashlib
from datetime import timedelta

from django.utils import timezone

from api.constants import Scope
from api.models import ApiToken

from .conftest import TokenClient, make_token


def _refused(response, status: int, code: str) -> str:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["code"] == code and body["error"]
    return str(body["error"])


def test_a_token_is_stored_as_its_sha256_only(learner):
    made = make_token(learner)
    row = ApiToken.objects.get(pk=made.token.pk)
    assert row.digest == hashlib.sha256(made.secret.encode()).hexdigest()
    assert made.secret not in {row.digest, row.prefix, row.name} and made.secret.startswith(row.prefix)
    assert TokenClient(made.secret).get("/me").json()["username"] == learner.username


def test_the_tokens_page_shows_a_new_token_once_then_only_its_prefix(learner_client):
    made = learner_client.post("/api/tokens/", {"name": "laptop", "scope": "read", "days": "30"})
    assert made.status_code == 200 and made["Cache-Control"] == "no-store"
    secret = made.context["secret"]
    assert secret.startswith("dojo_") and secret in made.content.decode()
    again = learner_client.get("/api/tokens/").content.decode()
    assert secret not in again and secret[:9] in again


def test_a_revoked_token_is_refused(learner, learner_client):
    made = make_token(learner)
    client = TokenClient(made.secret)
    assert client.get("/catalog").status_code == 200
    learner_client.post(f"/api/tokens/{made.token.pk}/revoke")
    assert "revoked" in _refused(client.get("/catalog"), 401, "token_revoked")


def test_an_expired_token_is_refused(learner):
    made = make_token(learner)
    ApiToken.objects.filter(pk=made.token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert "expired" in _refused(TokenClient(made.secret).get("/catalog"), 401, "token_expired")


def test_an_unknown_or_missing_token_is_refused(client, kv_rung):
    _refused(TokenClient("dojo_not-a-token").get("/rungs/kv-cache-size"), 401, "token_unknown")
    _refused(client.get("/api/v1/rungs/kv-cache-size"), 401, "token_missing")
    # A signed-in browser session is not a token: the API never acts on a cookie (no CSRF to forge).
    _refused(client.get("/api/v1/catalog"), 401, "token_missing")


def test_a_session_cookie_does_not_open_the_api(learner_client, kv_rung):
    _refused(learner_client.get("/api/v1/rungs/kv-cache-size"), 401, "token_missing")


def test_a_read_token_may_not_run_submit_or_save(learner, kv_rung, enqueued):
    client = TokenClient(make_token(learner, scope=Scope.READ).secret)
    code = {"code": "x = 1\n", "version": kv_rung.current_version.number}
    assert client.get("/rungs/kv-cache-size").status_code == 200
    for response in (client.post("/rungs/kv-cache-size/run", code), client.post("/rungs/kv-cache-size/submit", code), client.put("/rungs/kv-cache-size/draft", {"code": "x"})):
        assert "run_submit" in _refused(response, 403, "scope")
    assert enqueued == []


def test_a_disabled_account_s_token_is_refused(learner):
    made = make_token(learner)
    learner.is_active = False
    learner.save()
    _refused(TokenClient(made.secret).get("/me"), 401, "account_inactive")


def test_one_learner_cannot_revoke_another_s_token(learner, other_learner, other_learner_client):
    made = make_token(learner)
    other_learner_client.post(f"/api/tokens/{made.token.pk}/revoke")
    assert ApiToken.objects.get(pk=made.token.pk).revoked_at is None


def test_last_used_is_written_at_most_once_a_minute(learner, django_assert_max_num_queries):
    made = make_token(learner)
    client = TokenClient(made.secret)
    client.get("/me")
    first = ApiToken.objects.get(pk=made.token.pk).last_used_at
    client.get("/me")
    assert first is not None and ApiToken.objects.get(pk=made.token.pk).last_used_at == first


def test_a_password_change_ends_every_token_as_it_ends_every_session(learner, client):
    made = make_token(learner)
    api = TokenClient(made.secret)
    assert api.get("/me").status_code == 200
    client.force_login(learner)
    changed = client.post(
        "/accounts/password_change/",
        {"old_password": "learner-pass-123", "new_password1": "a-new-long-pass-789", "new_password2": "a-new-long-pass-789"},
    )
    assert changed.status_code == 302
    assert "password changed" in _refused(api.get("/me"), 401, "password_changed")
