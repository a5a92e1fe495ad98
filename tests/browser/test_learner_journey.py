"""A learner's journey in a real Chromium: sign up, open the KV-cache rung,
Run a wrong solution and watch a failing test arrive live, fix it, see the
draft survive a reload, Submit, see the reference unlock and the ladder mark
the rung solved. Screenshots go to var/screenshots/<timestamp>/."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.redis, pytest.mark.docker]

ROOT = Path(__file__).resolve().parents[2]
KV = ROOT / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
GRADING_TIMEOUT_MS = 180_000


@pytest.fixture
def shots() -> Path:
    folder = ROOT / "var" / "screenshots" / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def browser(monkeypatch: Any) -> Any:
    # A dev dependency, always installed: a missing one is a failure, not a skip.
    from playwright import sync_api as playwright_api
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    # Playwright's sync API runs an event loop in this thread; the ORM calls
    # that pytest-django makes here at teardown are still synchronous.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def site(live_server: Any, catalog: Any, worker: Any, redis_url: str, settings: Any) -> str:
    # The SSE view runs in live_server's thread of this process: point it at the test Redis.
    settings.REDIS_URL = redis_url
    return str(live_server.url)


def test_a_learner_runs_fixes_submits_and_unlocks_the_reference(site: str, browser: Any, shots: Path) -> None:
    from playwright.sync_api import expect

    wrong = (KV / "wrong" / "forgets_values.py").read_text()
    reference = (KV / "reference.py").read_text()
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.set_default_timeout(30_000)
    console_errors: list[str] = []
    page.on("console", lambda message: console_errors.append(message.text) if message.type == "error" else None)

    # Sign up.
    page.goto(site + "/signup/")
    page.fill("#id_username", "lena")
    page.fill("#id_password1", "a-long-learner-password-1")
    page.fill("#id_password2", "a-long-learner-password-1")
    page.click("button[type=submit]")
    expect(page.locator(".who")).to_have_text("lena")

    # The module page, with math typeset by KaTeX.
    page.goto(site + "/modules/inference-and-serving/")
    expect(page.locator('.state[data-rung="kv-cache-size"]')).to_contain_text("not started")
    page.screenshot(path=str(shots / "module-1280x800.png"))
    page.set_viewport_size(PHONE)
    page.screenshot(path=str(shots / "module-390x844.png"))
    page.set_viewport_size(DESKTOP)

    # Open the rung: three panels and a CodeMirror editor.
    page.click('.ladder a[href="/rungs/kv-cache-size/"]')
    expect(page.locator(".cm-editor")).to_be_visible()
    expect(page.locator("#rung-title")).to_be_visible()
    expect(page.locator("#panel-instructions .katex").first).to_be_visible()  # math typeset, no CDN
    page.evaluate("code => window.dojoWorkspace.setCode(code)", wrong)
    assert page.evaluate("() => window.dojoWorkspace.getCode()") == wrong

    # Run the wrong solution: a failing visible test arrives live, with its assertion message.
    page.click("#run-button")
    clicked = time.monotonic()
    page.locator("#tests li").first.wait_for(timeout=GRADING_TIMEOUT_MS)
    first_result_s = time.monotonic() - clicked
    expect(page.locator("#status")).to_have_class("status failed", timeout=GRADING_TIMEOUT_MS)
    failing = page.locator("#tests li.test-failed")
    expect(failing.first).to_be_visible()
    assert failing.first.locator("pre").inner_text().strip(), "a visible failure shows its assertion message"
    # One "changed" on subscribing, then one per claim / test row / result.
    assert int(page.get_attribute("#workspace", "data-hints") or 0) >= 2, "results should come by server-sent hints"
    expect(page.locator("#timings")).to_contain_text("Total in the sandbox")
    print(f"\nRun clicked -> first test result shown: {first_result_s:.2f} s")
    print("Phase timings: " + " | ".join(page.locator("#timings").inner_text().split("\n")))
    page.screenshot(path=str(shots / "workspace-run-failed-1280x800.png"))
    page.set_viewport_size(PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], "the phone layout must not scroll sideways"
    page.screenshot(path=str(shots / "workspace-390x844.png"))
    page.screenshot(path=str(shots / "workspace-390x844-full.png"), full_page=True)
    page.set_viewport_size(DESKTOP)

    # Fix it; the autosaved draft survives a reload.
    page.evaluate("code => window.dojoWorkspace.setCode(code)", reference)
    expect(page.locator("#save-state")).to_have_text("Draft saved")
    page.reload()
    expect(page.locator(".cm-editor")).to_be_visible()
    assert page.evaluate("() => window.dojoWorkspace.getCode()") == reference

    # Submit from the keyboard; the reference unlocks beside the learner's solution.
    assert not page.locator("#reference").is_visible()
    page.locator(".cm-content").click()
    page.keyboard.press("Control+Shift+Enter")
    expect(page.locator("#status")).to_have_class("status passed", timeout=GRADING_TIMEOUT_MS)
    expect(page.locator("#reference")).to_be_visible()
    expect(page.locator("#solved-badge")).to_contain_text("Solved")
    assert page.locator("#reference-code").inner_text().strip() == reference.strip()
    assert page.locator("#your-code").inner_text().strip() == reference.strip()
    expect(page.locator("#hidden-tests li").first).to_be_visible()
    page.screenshot(path=str(shots / "workspace-reference-1280x800.png"), full_page=True)

    # The history lists both attempts, with a diff against the current code.
    page.click("#history summary")
    expect(page.locator("#history-list li")).to_have_count(2)
    page.locator("#history-list li button").last.click()
    expect(page.locator("#history-diff .add").first).to_be_visible()

    # The ladder marks the rung solved.
    page.goto(site + "/modules/inference-and-serving/")
    expect(page.locator('.state[data-rung="kv-cache-size"]')).to_contain_text("solved")
    page.screenshot(path=str(shots / "module-solved-1280x800.png"), full_page=True)

    # Dark theme, chosen with the toggle.
    page.goto(site + "/rungs/kv-cache-size/")
    page.click("#theme-toggle")  # auto -> light
    page.click("#theme-toggle")  # light -> dark
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    page.screenshot(path=str(shots / "workspace-dark-1280x800.png"))

    context.close()
    print(f"Screenshots: {shots}")
    assert not [e for e in console_errors if "favicon" not in e], console_errors
