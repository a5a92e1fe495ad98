"""The module page in a real Chromium: its parts, rungs opening in place, and a
new learner's walk from the catalog through module 01 (a rung solved in
place) and "Where next?" into module 02, whose first rung they solve too.
Screenshots go to var/screenshots/<timestamp>/ (docs/img/ holds copies)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .test_learner_journey import DESKTOP, GRADING_TIMEOUT_MS, PHONE, ROOT, browser, shots

__all__ = ["browser", "shots"]  # fixtures, shared with the learner-journey test

RUNGS = ROOT / "exercises" / "llm-systems-frontier"
KV_REFERENCE = RUNGS / "inference-and-serving" / "rungs" / "01-kv-cache-size" / "reference.py"
MEMORY_REFERENCE = RUNGS / "training-at-scale" / "rungs" / "01-training-memory" / "reference.py"


@pytest.fixture
def pages(live_server: Any, catalog: Any) -> str:
    """The site without a worker: enough for everything but grading."""
    return str(live_server.url)


@pytest.fixture
def site(live_server: Any, catalog: Any, worker: Any, redis_url: str, settings: Any) -> str:
    settings.REDIS_URL = redis_url
    return str(live_server.url)


def _sign_up(page: Any, site: str, name: str) -> None:
    from playwright.sync_api import expect

    page.goto(site + "/signup/")
    page.fill("#id_username", name)
    page.fill("#id_password1", "a-long-learner-password-1")
    page.fill("#id_password2", "a-long-learner-password-1")
    page.click("button[type=submit]")
    expect(page.locator(".who")).to_have_text(name)


def _frame(page: Any, slug: str) -> Any:
    """The in-place workspace of ``slug``, once its editor is up."""
    handle = page.locator(f"#frame-{slug} iframe").element_handle()
    frame = handle.content_frame()
    frame.wait_for_selector(".cm-editor")
    return frame


def _solve_in_place(page: Any, slug: str, code: str) -> None:
    from playwright.sync_api import expect

    frame = _frame(page, slug)
    frame.evaluate("code => window.dojoWorkspace.setCode(code)", code)
    frame.click("#submit-button")
    inner = page.frame_locator(f"#frame-{slug} iframe")
    expect(inner.locator("#status")).to_have_class("status passed", timeout=GRADING_TIMEOUT_MS)
    expect(inner.locator("#solved-badge")).to_contain_text("Solved")


@pytest.mark.browser
def test_the_module_page_shows_its_parts_and_opens_rungs_in_place(pages: str, browser: Any, shots: Path, django_user_model: Any) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    _sign_up(page, pages, "nadia")

    page.goto(pages + "/modules/inference-and-serving/")
    # Internal ids are for authors only (issue 59, item 8).
    expect(page.locator("#module-id")).to_have_count(0)
    expect(page.locator("h1")).to_have_text("Inference & serving")
    expect(page.locator("#lede")).to_be_visible()
    expect(page.locator("#ladder-count")).to_contain_text("8 graded rungs · ~")
    expect(page.locator(".ladder-intro")).to_contain_text("Run")
    expect(page.locator(".rung-label")).to_have_count(8)
    expect(page.locator(".rung-label").first).to_contain_text("Rung 1 — ")
    expect(page.locator(".rung-label").last).to_contain_text("Senior rung — ")
    start = page.locator("#start-button")
    expect(start).to_contain_text("Start: Rung 1")
    assert start.bounding_box()["y"] < DESKTOP["height"], "the Start button is on the first screen"
    page.screenshot(path=str(shots / "module-01-top-1280x800.png"))

    # Start opens the first rung in place; nothing was framed before.
    assert page.locator(".rung-frame iframe").count() == 0
    start.click()
    first = page.locator("#rung-kv-cache-size .open-here")
    expect(first).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#frame-kv-cache-size")).to_be_visible()
    frame = _frame(page, "kv-cache-size")
    assert frame.locator(".topbar").count() == 0, "the embedded workspace shows no site chrome"
    expect(page.frame_locator("#frame-kv-cache-size iframe").locator("#run-button")).to_be_visible()
    # Leaving the workspace leaves the frame too; only another embedded page stays in it.
    leaving = frame.evaluate("""() => Array.from(document.querySelectorAll('a[href]:not([href^="#"]):not([href*="embed=1"])'))
        .map((link) => [link.getAttribute("href"), link.target])""")
    assert leaving and all(target == "_top" for _, target in leaving), leaving
    page.screenshot(path=str(shots / "module-01-rung-open-1280x800.png"))

    # One open at a time: opening another closes the first, which keeps its frame.
    second = page.locator("#rung-quantization-arithmetic .open-here")
    second.click()
    expect(second).to_have_attribute("aria-expanded", "true")
    expect(first).to_have_attribute("aria-expanded", "false")
    expect(page.locator("#frame-kv-cache-size")).to_be_hidden()
    assert page.locator(".rung-frame iframe").count() == 2
    second.click()
    expect(page.locator("#frame-quantization-arithmetic")).to_be_hidden()

    # The full-page workspace is one click away.
    with page.expect_navigation():
        page.locator("#rung-kv-cache-size .full-page").click()
    assert page.url.endswith("/rungs/kv-cache-size/")
    expect(page.locator(".topbar")).to_be_visible()
    page.go_back()

    # In-app "Go further" link, and "Where next?" into module 02.
    expect(page.locator('#sources a[href="/modules/training-at-scale/"]')).to_have_text("Training at scale")
    expect(page.locator("#where-next-title")).to_have_text("Where next? Later in LLM Systems & Frontier")
    page.locator('#where-next a[href="/modules/training-at-scale/"]').click()
    expect(page.locator("h1")).to_have_text("Training at scale")
    expect(page.locator(".rung-label")).to_have_text(["Rung 1 — Memory per GPU for training", "Rung 2 — Data-parallel step time", "Rung 3 — FP8 with delayed scaling", "Rung 4 — Pack gradients into all-reduce buckets, fast", "Senior rung — Pipeline schedules: GPipe vs 1F1B"])
    expect(page.locator(".katex").first).to_be_visible()
    page.screenshot(path=str(shots / "module-02-top-1280x800.png"))
    page.screenshot(path=str(shots / "module-02-full-1280.png"), full_page=True)
    page.set_viewport_size(PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], "the phone layout must not scroll sideways"
    page.screenshot(path=str(shots / "module-02-390x844.png"))
    page.set_viewport_size(DESKTOP)

    # Back up a level, to the track.
    page.click("#up-level")
    assert page.url.endswith("/tracks/llm-systems-frontier/")
    expect(page.locator(".module-list a")).to_have_text(["Inference & serving", "Training at scale"])
    context.close()
    assert not [e for e in errors if "favicon" not in e], errors


@pytest.mark.browser
@pytest.mark.worker
@pytest.mark.redis
@pytest.mark.docker
def test_a_new_learner_walks_from_the_catalog_through_both_modules(site: str, browser: Any, shots: Path) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.set_default_timeout(30_000)
    _sign_up(page, site, "tariq")

    # The catalog lists both modules in order; open the first.
    page.goto(site + "/")
    expect(page.locator(".module-list a")).to_have_text(["Inference & serving", "Training at scale"])
    page.locator(".module-list a").first.click()
    expect(page.locator("h1")).to_have_text("Inference & serving")
    expect(page.locator("#lede")).to_be_visible()

    # Start, solve the first rung in place; the page then offers to continue.
    page.click("#start-button")
    _solve_in_place(page, "kv-cache-size", KV_REFERENCE.read_text())
    page.screenshot(path=str(shots / "module-01-solved-in-place-1280x800.png"))
    page.reload()
    expect(page.locator('.state[data-rung="kv-cache-size"]')).to_contain_text("solved")
    expect(page.locator("#start-button")).to_contain_text("Continue: Rung 2")

    # Where next? -> module 02, whose first rung is solved the same way.
    page.locator('#where-next a[href="/modules/training-at-scale/"]').click()
    expect(page.locator("h1")).to_have_text("Training at scale")
    expect(page.locator("#start-button")).to_contain_text("Start: Rung 1 — Memory per GPU for training")
    page.click("#start-button")
    _solve_in_place(page, "training-memory", MEMORY_REFERENCE.read_text())
    page.reload()
    expect(page.locator('.state[data-rung="training-memory"]')).to_contain_text("solved")
    expect(page.locator("#start-button")).to_contain_text("Continue: Rung 2 — Data-parallel step time")

    # The catalog shows the progress in each module.
    page.goto(site + "/")
    expect(page.locator(".progress").first).to_contain_text("1/8 solved")
    expect(page.locator(".progress").last).to_contain_text("1/5 solved")
    context.close()
