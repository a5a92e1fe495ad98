"""The ask box in a real Chromium: the answer and the passages appear, a
streamed answer arrives, a failing model shows its message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mentor import messages
from tests.browser.login import signed_in_context

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
def page(live_server: Any, catalog: Any, learner: Any, settings: Any, browser: Any) -> Any:
    settings.ROOT_URLCONF = "mentor.tests.urls"
    context = signed_in_context(browser, live_server.url, learner)
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

    _ask(page, "What happens to a request that generates zero output tokens?")  # no authored explanation covers it
    expect(page.locator(".mentor-text")).to_have_text(messages.NO_MODEL_INTRO)
    first = page.locator(".mentor-passages li a").first
    expect(first).to_have_attribute("href", "/rungs/continuous-batching/")
    expect(page.locator("[data-mentor-answer]")).to_have_attribute("aria-busy", "false")


def test_without_a_model_an_authored_explanation_is_the_answer(page: Any) -> None:
    from playwright.sync_api import expect

    _ask(page, "What is copy-on-write in paged attention?")
    expect(page.locator(".mentor-text strong").first).to_have_text("PagedAttention")
    expect(page.locator(".mentor-text")).to_contain_text(messages.EXPLANATION_FURTHER)
    expect(page.locator(".mentor-passages li a").first).to_have_attribute("href", "/rungs/paged-attention/")


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


@pytest.fixture
def module_page(live_server: Any, catalog: Any, learner: Any, browser: Any) -> Any:
    """The real module page (KaTeX loaded), logged in as the learner."""
    context = signed_in_context(browser, live_server.url, learner, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/modules/inference-and-serving/")
    yield page
    assert errors == []
    context.close()


def test_a_calculator_question_shows_the_exact_bytes_and_rendered_working(module_page: Any) -> None:
    from playwright.sync_api import expect

    page = module_page
    box = page.locator("#ask-the-mentor")
    form_width = box.locator(".mentor-form").bounding_box()["width"]
    assert box.locator("textarea").bounding_box()["width"] >= form_width - 2  # full width
    box.locator("textarea[name=question]").fill("KV cache of Llama-3-70B at 8192 tokens, batch 4, fp16?")
    box.locator(".mentor-form button[type=submit]").click()
    expect(box.locator(".mentor-label")).to_have_text("From the module")
    calculation = box.locator(".mentor-calculation")
    expect(calculation).to_contain_text("10,737,418,240 bytes")
    expect(calculation.locator("ol > li")).to_have_count(5)
    expect(box.locator("[data-mentor-answer]")).to_have_attribute("aria-busy", "false")
    shown = box.locator("[data-mentor-answer]").inner_text()
    assert "**" not in shown and "`" not in shown and "| ---" not in shown


def test_math_and_tables_in_passages_are_rendered_not_raw(module_page: Any) -> None:
    from playwright.sync_api import expect

    page = module_page
    box = page.locator("#ask-the-mentor")
    box.locator("textarea[name=question]").fill("How do MHA, GQA and MQA compare in KV heads and cache size?")
    box.locator(".mentor-form button[type=submit]").click()
    expect(box.locator(".mentor-passages table").first).to_be_visible()
    expect(box.locator(".mentor-passages .katex").first).to_be_attached()
    shown = box.locator("[data-mentor-answer]").inner_text()
    # KaTeX keeps the source only inside its hidden MathML annotation; nothing raw is visible.
    visible = page.evaluate(
        """() => { const area = document.querySelector('[data-mentor-answer]').cloneNode(true);
                   area.querySelectorAll('.katex-mathml').forEach(n => n.remove()); return area.innerText; }"""
    )
    assert "$" not in visible and "`" not in visible and "| ---" not in visible, visible
    assert shown
