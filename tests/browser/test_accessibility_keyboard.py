"""A keyboard-only journey through the workspace (issue 59, item 18): Tab into the
editor and out again, Run from the keyboard, read the announced result, open a
hint and Submit, never touching the mouse. Grading goes through the real worker.

The editor's Tab-key design (frontend/editor/editor.js): reached by Tab, the
editor lets the next Tab move on (a keyboard user passing through is never
trapped); once the learner types, Tab indents, and Escape then Tab leaves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.login import signed_in_context
from tests.browser.test_learner_journey import browser  # noqa: F401  # the fixture: one Chromium

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.redis, pytest.mark.docker]

ROOT = Path(__file__).resolve().parents[2]
KV = ROOT / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"
GRADING_TIMEOUT_MS = 180_000


@pytest.fixture
def site(live_server: Any, catalog: Any, worker: Any, redis_url: str, settings: Any) -> str:
    # The SSE view runs in live_server's thread of this process: point it at the test Redis.
    settings.REDIS_URL = redis_url
    return str(live_server.url)


def _tab_to(page: Any, selector: str, limit: int = 80) -> None:
    """Press Tab until the focused element matches ``selector``."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("selector => document.activeElement.matches(selector)", selector):
            return
    raise AssertionError(f"{limit} Tabs never reached {selector}")


def _focused(page: Any) -> str:
    return str(page.evaluate("() => document.activeElement.id || document.activeElement.className"))


def test_a_keyboard_user_runs_reads_the_result_opens_a_hint_and_submits(site: str, browser: Any, learner: Any) -> None:  # noqa: F811
    from playwright.sync_api import expect

    page = signed_in_context(browser, site, learner, viewport={"width": 1440, "height": 900}).new_page()
    page.set_default_timeout(30_000)
    page.goto(site + "/rungs/kv-cache-size/")
    expect(page.locator(".cm-editor")).to_be_visible()
    code = page.evaluate("() => window.dojoWorkspace.getCode()")

    # Into the editor by Tab; the next Tab passes through, leaving no indent behind.
    _tab_to(page, ".cm-content")
    page.keyboard.press("Tab")
    assert _focused(page) != "cm-content", "a Tab right after reaching the editor moves on"
    assert page.evaluate("() => window.dojoWorkspace.getCode()") == code

    # Back in (Shift+Tab), write the solution, Run with Ctrl+Enter, and read the announced result.
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("() => document.activeElement.matches('.cm-content')")
    page.keyboard.press("Control+a")
    page.keyboard.insert_text((KV / "reference.py").read_text())
    page.keyboard.press("Control+Enter")
    status = page.locator("#status")
    expect(status).to_have_class("status passed", timeout=GRADING_TIMEOUT_MS)
    assert status.get_attribute("role") == "status" and status.get_attribute("aria-live") == "polite"
    expect(status).to_contain_text("pass")

    # Typed in, Tab indents; Escape then Tab leaves the editor.
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert _focused(page) != "cm-content", "Escape then Tab leaves the editor"

    # A hint, by keyboard.
    _tab_to(page, "#reveal-hint")
    page.keyboard.press("Enter")
    expect(page.locator("#hint-list li")).to_have_count(1)

    # Submit, by keyboard: Shift+Tab back to the Run bar's Submit button.
    for _ in range(120):
        page.keyboard.press("Shift+Tab")
        if _focused(page) == "submit-button":
            break
    assert _focused(page) == "submit-button"
    page.keyboard.press("Enter")
    expect(page.locator("#solved-badge")).to_contain_text("Solved", timeout=GRADING_TIMEOUT_MS)
    expect(status).to_have_class("status passed")
