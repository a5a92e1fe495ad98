"""Signing a Playwright browser in: the one helper of every browser test.

``signed_in_context`` hands the browser a session cookie made by Django's
test client (no login page: for tests about another page);
``log_in_with_the_form`` fills the real login form (for journeys that go
through it).
"""

from __future__ import annotations

from typing import Any


def signed_in_context(browser: Any, base_url: str, user: Any, **options: Any) -> Any:
    """A new context of ``browser`` (``options`` as for ``new_context``) already logged in as ``user`` on ``base_url``."""
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    context = browser.new_context(**options)
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": base_url}])
    return context


def log_in_with_the_form(page: Any, site: str, username: str, password: str, next_path: str) -> None:
    """Log ``page`` in through the login page, which then goes on to ``next_path``."""
    page.goto(f"{site}/accounts/login/?next={next_path}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
