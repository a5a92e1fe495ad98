"""The workspace as a learner meets it (issue 18), in a real Chromium at
1440x900 and at 800 px, keyboard-only where it matters: the layout, refusals
in plain words, a reload half a second after typing, the Tab key, results
with failures first, restored after a reload, the history, Cancel on an
infinite loop, a timeout at import time, "Next rung" after a pass.
Screenshots go to var/screenshots/workspace/."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser import test_learner_journey as journey

browser = journey.browser  # the shared Chromium fixture

pytestmark = [pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
KV = ROOT / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"
WIDE = {"width": 1440, "height": 900}
NARROW = {"width": 800, "height": 900}
SHOTS = ROOT / "var" / "screenshots" / "workspace"
GRADING_TIMEOUT_MS = 180_000
PASSWORD = "learner-pass-123"


@pytest.fixture
def shots() -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS


def _open(browser: Any, base: str, viewport: dict[str, int], path: str = "/rungs/kv-cache-size/") -> Any:
    from playwright.sync_api import expect

    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(base + "/accounts/login/")
    page.fill("#id_username", "lena")
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.goto(base + path)
    expect(page.locator(".cm-editor")).to_be_visible()
    return page


def _box(page: Any, selector: str) -> dict[str, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, f"{selector} is not laid out"
    return dict(box)


def _in_view(page: Any, selector: str) -> bool:
    return bool(page.evaluate(
        "s => { const r = document.querySelector(s).getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight && r.height > 0; }", selector
    ))


def _code(page: Any) -> str:
    return str(page.evaluate("() => window.dojoWorkspace.getCode()"))


# --- Without a worker: layout, refusals, drafts, keyboard, history ---------------------------


@pytest.fixture
def page_site(live_server: Any, catalog: Any, learner: Any) -> str:
    return str(live_server.url)


def test_at_1440_the_editor_has_half_the_width_and_a_resize_is_remembered(page_site: str, browser: Any, shots: Path) -> None:
    page = _open(browser, page_site, WIDE)
    editor, instructions, output = _box(page, "#panel-code"), _box(page, "#panel-instructions"), _box(page, "#panel-output")
    assert editor["width"] >= WIDE["width"] / 2, editor
    assert output["y"] > editor["y"] and abs(output["x"] - editor["x"]) < 2, "the output sits below the editor"
    assert instructions["x"] < editor["x"]
    assert page.locator(".ws-tabs").is_hidden()
    page.screenshot(path=str(shots / "workspace-1440x900.png"))

    # Keyboard resize of the instructions: it never takes more than half.
    page.focus(".splitter-v")
    for _ in range(3):
        page.keyboard.press("Shift+ArrowLeft")
    narrower = _box(page, "#panel-instructions")["width"]
    assert narrower < instructions["width"] - 100
    for _ in range(20):
        page.keyboard.press("Shift+ArrowRight")
    assert _box(page, "#panel-code")["width"] >= WIDE["width"] / 2 - 20
    for _ in range(2):
        page.keyboard.press("Shift+ArrowLeft")
    chosen = _box(page, "#panel-instructions")["width"]
    page.focus(".splitter-h")
    page.keyboard.press("Shift+ArrowUp")
    taller = _box(page, "#panel-output")["height"]
    page.reload()
    page.locator(".cm-editor").wait_for()
    assert abs(_box(page, "#panel-instructions")["width"] - chosen) < 3, "the width is remembered"
    assert abs(_box(page, "#panel-output")["height"] - taller) < 3, "the height is remembered"
    page.context.close()


def test_at_800_the_panels_are_tabs_with_a_sticky_run_bar(page_site: str, browser: Any, shots: Path) -> None:
    from playwright.sync_api import expect

    page = _open(browser, page_site, NARROW)
    expect(page.locator(".ws-tabs")).to_be_visible()
    expect(page.locator("#tab-code")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#panel-code")).to_be_visible()
    expect(page.locator("#panel-instructions")).to_be_hidden()
    assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"], "no sideways scrolling"
    bar = _box(page, "#runbar")
    assert bar["y"] + bar["height"] <= NARROW["height"] + 1, "the Run bar is on screen"
    page.screenshot(path=str(shots / "workspace-800-code.png"))

    page.click("#tab-instructions")
    expect(page.locator("#panel-instructions")).to_be_visible()
    expect(page.locator("#panel-code")).to_be_hidden()
    page.mouse.wheel(0, 3000)
    page.wait_for_timeout(300)
    bar = _box(page, "#runbar")
    assert 0 <= bar["y"] and bar["y"] + bar["height"] <= NARROW["height"] + 1, "the Run bar sticks while scrolling"
    page.screenshot(path=str(shots / "workspace-800-instructions.png"))
    # Arrow keys move between tabs, as in any tab list.
    page.focus("#tab-instructions")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#tab-code")).to_be_focused()
    expect(page.locator("#panel-code")).to_be_visible()
    page.context.close()


def test_empty_and_oversized_code_are_refused_in_words_before_sending(page_site: str, browser: Any, shots: Path) -> None:
    from playwright.sync_api import expect

    from grader.models import Submission

    page = _open(browser, page_site, WIDE)
    page.evaluate("() => window.dojoWorkspace.setCode('')")
    expect(page.locator("#empty-offer")).to_be_visible()
    page.click("#run-button")
    expect(page.locator("#status")).to_have_text(re.compile("The editor is empty, so there is nothing to run"))
    page.click("#empty-reset")
    assert _code(page) == (KV / "starter.py").read_text()
    expect(page.locator("#empty-offer")).to_be_hidden()

    page.evaluate("() => window.dojoWorkspace.setCode('#'.repeat(70000))")
    expect(page.locator("#size-state")).to_have_text("70,000 / 65,536 bytes")
    page.click("#submit-button")
    expect(page.locator("#status")).to_have_text(re.compile(r"Your code is 70,000 bytes; the limit is 65,536 bytes\."))
    page.screenshot(path=str(shots / "workspace-too-large-1440.png"))
    assert not Submission.objects.exists(), "nothing was sent"
    page.context.close()


def test_a_reload_half_a_second_after_typing_keeps_the_edit(page_site: str, browser: Any) -> None:
    from frontend.models import Draft

    page = _open(browser, page_site, WIDE)
    for attempt in range(3):
        page.click(".cm-content")
        page.keyboard.press("Control+End")
        marker = f"# edit {attempt} just before the reload"
        page.keyboard.type("\n" + marker)
        page.wait_for_timeout(500)
        page.reload()
        page.locator(".cm-editor").wait_for()
        assert marker in _code(page), f"try {attempt}: the edit was lost"
    # The server gets it too, saved again from the browser's copy if the reload beat it.
    page.wait_for_function("() => document.getElementById('save-state').textContent === 'Draft saved'", timeout=15_000)
    assert "# edit 2 just before the reload" in Draft.objects.get().code
    page.context.close()


def test_the_tab_key_never_traps_a_keyboard_user(page_site: str, browser: Any, shots: Path) -> None:
    from playwright.sync_api import expect

    page = _open(browser, page_site, WIDE)
    before = _code(page)
    page.focus("#tab-mode")
    page.keyboard.press("Tab")  # into the editor
    expect(page.locator(".cm-content")).to_be_focused()
    expect(page.locator("#tab-hint")).to_have_class(re.compile("focused"))
    expect(page.locator("#tab-hint-text")).to_contain_text("press Tab again to move on")
    page.screenshot(path=str(shots / "workspace-tab-hint-1440.png"))
    page.keyboard.press("Tab")  # passing through: out again, no stray indent
    expect(page.locator(".cm-content")).not_to_be_focused()
    assert _code(page) == before, "a stray Tab changed the code"

    # Typing first: Tab indents (with spaces); Esc then Tab leaves.
    page.click(".cm-content")
    page.keyboard.press("Control+End")
    page.keyboard.type("\nx = 1")
    page.keyboard.press("Tab")
    assert _code(page).endswith("\n    x = 1"), repr(_code(page)[-20:])
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    expect(page.locator(".cm-content")).not_to_be_focused()

    # Ctrl+M (or the visible button) makes Tab move focus; the choice is shown and kept.
    page.click(".cm-content")
    page.keyboard.press("Control+m")
    expect(page.locator("#tab-mode")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#tab-mode")).to_have_text("Tab key: moves focus")
    typed = _code(page)
    page.keyboard.press("Tab")
    expect(page.locator(".cm-content")).not_to_be_focused()
    assert _code(page) == typed
    page.reload()
    expect(page.locator("#tab-mode")).to_have_text("Tab key: moves focus")
    page.click("#tab-mode")
    expect(page.locator("#tab-mode")).to_have_attribute("aria-pressed", "false")
    page.context.close()


def test_the_history_shows_scores_pages_and_reopens_an_attempts_results(page_site: str, browser: Any, learner: Any) -> None:
    from playwright.sync_api import expect

    from exercises.models import Rung
    from grader.constants import Kind, Outcome, Status
    from grader.models import Submission, SubmissionTestResult

    rung = Rung.objects.get(slug="kv-cache-size")
    version = rung.current_version
    assert version is not None
    for n in range(12):
        submission = Submission.objects.create(
            user=learner, rung=rung, rung_version=version, kind=Kind.RUN, code=f"attempt = {n}\n",
            status=Status.DONE, outcome=Outcome.FAILED if n else Outcome.PASSED,
        )
        SubmissionTestResult.objects.create(submission=submission, order=0, name="test_one", outcome="passed")
        SubmissionTestResult.objects.create(submission=submission, order=1, name="test_two", outcome="failed", message=f"wrong by {n}")
    newest = Submission.objects.order_by("-pk").first()
    assert newest is not None

    page = _open(browser, page_site, WIDE)
    # The last result is shown again after a reload, failures first.
    expect(page.locator("#status")).to_contain_text("Last result")
    expect(page.locator("#tests li").first).to_contain_text("test_two")
    expect(page.locator("#test-summary")).to_have_text("1 failed · 1 passed")
    expect(page.locator("#passed-box")).not_to_have_attribute("open", "")

    page.click("#history summary")
    expect(page.locator("#history-list li")).to_have_count(10)
    expect(page.locator("#history-list li").first).to_contain_text("1/2 passed")
    page.click("#history-more")
    expect(page.locator("#history-list li")).to_have_count(12)
    expect(page.locator("#history-more")).to_be_hidden()
    page.locator("#history-list li button").last.click()
    page.click("#history-results")
    expect(page.locator("#status")).to_contain_text("Attempt #")
    expect(page.locator("#tests li").first).to_contain_text("wrong by 0")
    page.context.close()


# --- With a real worker and sandbox: runs, results, cancel, timeout, next rung -------------


@pytest.fixture
def graded_site(live_server: Any, catalog: Any, learner: Any, worker_factory: Any, redis_url: str, settings: Any) -> str:
    settings.REDIS_URL = redis_url
    # A short Run limit, so an infinite loop at import time ends quickly.
    worker_factory().start(GRADER_RUN_TIME_S="6", GRADER_CANCEL_POLL_S="0.5")
    return str(live_server.url)


@pytest.mark.worker
@pytest.mark.redis
@pytest.mark.docker
def test_keyboard_only_run_then_submit_shows_failures_first_and_next_rung(graded_site: str, browser: Any, shots: Path) -> None:
    from playwright.sync_api import expect

    page = _open(browser, graded_site, WIDE)
    page.evaluate("code => window.dojoWorkspace.setCode(code)", (KV / "wrong" / "forgets_values.py").read_text())
    # Keyboard only: Tab from the button before the editor into it, then Ctrl+Enter.
    page.focus("#tab-mode")
    page.keyboard.press("Tab")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#timer")).to_be_visible()
    expect(page.locator("#status")).to_have_class("status failed", timeout=GRADING_TIMEOUT_MS)
    assert _in_view(page, "#status")
    first = page.locator("#tests li").first
    expect(first).to_have_class(re.compile("test-failed"))
    failed = page.locator("#tests li.test-failed").count()
    passed = page.locator("#tests-passed li").count()
    expect(page.locator("#test-summary")).to_have_text(f"{failed} failed" + (f" · {passed} passed" if passed else ""))
    page.screenshot(path=str(shots / "workspace-run-failed-1440x900.png"))

    page.reload()
    expect(page.locator("#status")).to_contain_text("Last result", timeout=15_000)
    expect(page.locator("#tests li.test-failed").first).to_be_visible()

    page.evaluate("code => window.dojoWorkspace.setCode(code)", (KV / "reference.py").read_text())
    page.locator(".cm-content").focus()
    page.keyboard.press("Control+Shift+Enter")
    expect(page.locator("#status")).to_have_class("status passed", timeout=GRADING_TIMEOUT_MS)
    expect(page.locator("#next-rung")).to_be_visible()
    expect(page.locator("#next-rung")).to_contain_text("Next rung")
    expect(page.locator("#back-to-module")).to_be_visible()
    expect(page.locator("#reference-code .tok-keyword").first).to_be_visible()  # highlighted like the editor
    page.screenshot(path=str(shots / "workspace-passed-1440x900.png"))
    page.locator("#reference").screenshot(path=str(shots / "workspace-reference-1440.png"))
    page.context.close()


@pytest.mark.worker
@pytest.mark.redis
@pytest.mark.docker
def test_at_800_a_run_switches_to_the_output_and_an_import_time_loop_is_named(graded_site: str, browser: Any, shots: Path) -> None:
    from playwright.sync_api import expect

    page = _open(browser, graded_site, NARROW)
    page.evaluate("code => window.dojoWorkspace.setCode(code)", (KV / "reference.py").read_text() + "\nwhile True:\n    pass\n")
    page.click("#run-button")
    expect(page.locator("#tab-output")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#status")).to_have_class("status timeout", timeout=GRADING_TIMEOUT_MS)
    assert _in_view(page, "#status"), "the result is on screen at 800 px"
    expect(page.locator("#status")).to_contain_text("did not finish loading")
    expect(page.locator("#test-summary")).to_contain_text("not run")
    expect(page.locator("#tests li.test-skipped").first).to_contain_text("not run")
    page.screenshot(path=str(shots / "workspace-800-timeout-at-import.png"))
    page.context.close()


@pytest.mark.worker
@pytest.mark.redis
@pytest.mark.docker
def test_cancel_stops_an_infinite_loop_and_does_not_count(graded_site: str, browser: Any, shots: Path) -> None:
    from playwright.sync_api import expect

    from grader.models import Progress, Submission

    page = _open(browser, graded_site, WIDE)
    looping = (KV / "reference.py").read_text() + "\n\ndef kv_cache_bytes(*args, **kwargs):\n    while True:\n        pass\n"
    page.evaluate("code => window.dojoWorkspace.setCode(code)", looping)
    page.click("#submit-button")
    expect(page.locator("#status")).to_have_class("status running", timeout=GRADING_TIMEOUT_MS)
    expect(page.locator("#timer")).not_to_have_text("0:00", timeout=5_000)  # it ticks
    page.screenshot(path=str(shots / "workspace-running-with-cancel-1440.png"))
    page.click("#cancel-button")
    expect(page.locator("#status")).to_have_class("status cancelled", timeout=20_000)
    expect(page.locator("#status")).to_contain_text("does not count")
    expect(page.locator("#cancel-button")).to_be_hidden()
    expect(page.locator("#run-button")).to_be_enabled()
    submission = Submission.objects.get()
    assert submission.outcome == "cancelled"
    assert not Progress.objects.exists(), "a cancelled Submit is not an attempt"
    page.context.close()


def test_dashboard_bar_labels_are_not_clipped(browser: Any, shots: Path) -> None:
    from authoring.charts import bar_chart

    css = (ROOT / "authoring" / "static" / "authoring" / "authoring.css").read_text()
    rows = [
        ("test_partial_last_group_still_needs_a_scale", 9.0),
        ("test_fifo_blocks_requests_behind_a_head_that_does_not_fit", 4.0),
        ("test_rejection_ends_the_block_even_when_later_tokens_match", 2.0),
        ("short", 1.0),
    ]
    svg = bar_chart(rows, title="Hidden tests that fail most")
    for width in (1440, 800, 420):
        context = browser.new_context(viewport={"width": width, "height": 600})
        page = context.new_page()
        page.set_content(f"<style>:root{{--fg:#111;--accent:#06c}} {css}</style><div style='width:{min(width, 560)}px'>{svg}</div>")
        boxes = page.evaluate("() => [...document.querySelectorAll('svg.chart text.label')].map(t => { const b = t.getBBox(); return [b.x, b.x + b.width]; })")
        bars = page.evaluate("() => Math.min(...[...document.querySelectorAll('svg.chart rect.bar')].map(r => r.x.baseVal.value))")
        assert len(boxes) == 4 and all(left >= 0 and right <= bars for left, right in boxes), f"a label is clipped or runs into its bar: {boxes}, bars at {bars}"
        if width == 800:
            page.screenshot(path=str(shots / "dashboard-bar-labels.png"))
        context.close()
