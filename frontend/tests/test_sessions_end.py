"""Sessions end on the server (issue 55, finding 3): a copy of the session
cookie, taken before, stops working after logout, after a password change
and after an admin's "log out everywhere"."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.test import Client

PASSWORD = "learner-pass-123"


def _logged_in(password: str = PASSWORD) -> tuple[Client, Client]:
    """A learner's browser, logged in, and an attacker's with a copy of its session cookie."""
    browser = Client()
    assert browser.post("/accounts/login/", {"username": "lena", "password": password}).status_code == 302
    thief = Client()
    thief.cookies[settings.SESSION_COOKIE_NAME] = browser.cookies[settings.SESSION_COOKIE_NAME].value
    assert _signed_in(thief)
    return browser, thief


def _signed_in(client: Client) -> bool:
    response = client.get("/accounts/password_change/")
    return response.status_code == 200


@pytest.mark.django_db
def test_a_copied_cookie_stops_working_after_logout(learner: Any) -> None:
    browser, thief = _logged_in()
    assert browser.post("/accounts/logout/").status_code == 302
    assert not _signed_in(thief)


@pytest.mark.django_db
def test_a_password_change_ends_the_other_sessions_and_keeps_this_one(learner: Any) -> None:
    browser, thief = _logged_in()
    other_device, _ = _logged_in()
    response = browser.post(
        "/accounts/password_change/", {"old_password": PASSWORD, "new_password1": "a-new-pass-4711", "new_password2": "a-new-pass-4711"}
    )
    assert response.status_code == 302, response.content[:500]
    assert _signed_in(browser)
    assert not _signed_in(thief)
    assert not _signed_in(other_device)


@pytest.mark.django_db
def test_an_admin_logs_a_user_out_everywhere(learner: Any, admin_user: Any) -> None:
    _, thief = _logged_in()
    laptop, _ = _logged_in()
    admin = Client()
    admin.force_login(admin_user)
    response = admin.post(
        "/admin/auth/user/", {"action": "log_out_everywhere", "_selected_action": [str(learner.pk)]}, follow=True
    )
    assert response.status_code == 200
    assert "Logged out everywhere: 1 user" in response.content.decode()
    assert not _signed_in(thief)
    assert not _signed_in(laptop)
    assert admin.get("/admin/").status_code == 200  # the admin's own session goes on
