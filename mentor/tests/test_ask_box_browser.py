"""The ask box in a real Chromium: the answer and the passages appear, a
streamed answer arrives, a failing model shows its message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mentor import messages

from .conftest import ANSWER_PIECES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


@pytest.fixture
def browser(monkeypatch: Any) -> Any:
    # A dev dependency, always installed: a missing one is a failure, not a skip.
    from playwright import sync_api as playwright_api
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(live_server: Any, catalog: Any, learner: Any, client: Any, settings: Any, browser: Any) -> Any:
    settings.ROOT_URLCONF = "mentor.tests.urls"
    client.force_login(learner)
    context = browser.new_context()
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/mentor-test/box/inference-and-serving/")
    yield page
    assert errors == []
    context.close()


def _ask(page: Any, question: str) -> None:
    page.fill("textarea[name=question]", question)
    page.click(".mentor-form button[type=submit]")


def test_without_a_model_the_passages_appear_as_links(page: Any) -> None:
    from playwright.sync_api import expect

    _ask(page, "What is copy-on-write in paged attention?")
    expect(page.locator(".mentor-text")).to_have_text(messages.NO_MODEL_INTRO)
    first = page.locator(".mentor-passages li a").first
    expect(first).to_have_attribute("href", "/rungs/paged-attention/")
    expect(page.locator("[data-mentor-answer]")).to_have_attribute("aria-busy", "false")


def test_a_streamed_answer_is_written_into_the_page(page: Any, with_model: Any) -> None:
    from playwright.sync_api import expect

    _ask(page, "Why is decoding limited by memory bandwidth?")
    expect(page.locator(".mentor-text")).to_have_text("".join(ANSWER_PIECES))
    expect(page.locator(".mentor-passages li")).not_to_have_count(0)
    assert with_model.requests[0]["stream"] is True


def test_a_failing_model_shows_its_message_and_the_passages(page: Any, with_model: Any) -> None:
    from playwright.sync_api import expect

    with_model.mode = "error"
    _ask(page, "Why is decoding limited by memory bandwidth?")
    expect(page.locator(".mentor-error")).to_have_text(messages.MODEL_HTTP_ERROR.format(status=500))
    expect(page.locator(".mentor-passages li")).not_to_have_count(0)
