"""Guessing passwords: a name and address that fail too often are paused, in words, with an honest Retry-After."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _small_limit(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.AXES_FAILURE_LIMIT = 3


def _login(client: Client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def test_a_name_that_fails_too_often_from_one_address_is_paused_even_with_the_right_password(learner, settings):
    learner.set_password("the-right-pass-1")
    learner.save()
    guesser = Client()
    for _ in range(2):
        assert _login(guesser, "lena", "wrong").status_code == 200  # the form again, with its error
    paused = _login(guesser, "lena", "wrong")
    assert paused.status_code == 429
    assert paused["Retry-After"] == str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    assert "Too many failed logins" in paused.content.decode()
    # The right password does not get through the pause from that address...
    assert _login(guesser, "lena", "the-right-pass-1").status_code == 429
    # ...but from another address (the learner at home) it does, and another name from the first address is not paused.
    assert _login(Client(), "lena", "the-right-pass-1", address="10.0.0.2").status_code == 302
    assert _login(Client(), "omar", "wrong").status_code == 200


def test_a_success_resets_the_count(learner):
    learner.set_password("the-right-pass-1")
    learner.save()
    client = Client()
    for _ in range(2):
        assert _login(client, "lena", "typo").status_code == 200
    assert _login(client, "lena", "the-right-pass-1").status_code == 302
    client.logout()
    for _ in range(2):
        assert _login(client, "lena", "typo").status_code == 200
    assert _login(client, "lena", "the-right-pass-1").status_code == 302


def test_signing_up_still_logs_the_new_learner_in(client):
    response = client.post("/signup/", {"username": "nia", "password1": "a-long-pass-word-9", "password2": "a-long-pass-word-9"})
    assert response.status_code == 302
    assert client.get("/accounts/password_change/").status_code == 200


def _change_password(client: Client, old_password: str, address: str = "10.0.0.1"):
    new = "a-brand-new-pass-77"
    return client.post("/accounts/password_change/", {"old_password": old_password, "new_password1": new, "new_password2": new}, REMOTE_ADDR=address)


def test_wrong_old_passwords_at_the_password_change_count_as_failed_logins(learner, settings):
    """A stolen session must not be an oracle for the password (issue 55, finding 4)."""
    learner.set_password("the-right-pass-1")
    learner.save()
    client = Client()
    client.force_login(learner)
    for _ in range(2):
        assert _change_password(client, "wrong").status_code == 200  # the form again, with its error
    paused = _change_password(client, "wrong")
    assert paused.status_code == 429
    assert paused["Retry-After"] == str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    # The right old password does not get through the pause, and the password is unchanged.
    assert _change_password(client, "the-right-pass-1").status_code == 429
    learner.refresh_from_db()
    assert learner.check_password("the-right-pass-1")
    # The same name from the same address is paused at the login too: one count.
    assert _login(Client(), "lena", "the-right-pass-1").status_code == 429
