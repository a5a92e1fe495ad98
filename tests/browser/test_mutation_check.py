"""The mutation gate in a real Chromium: an instructor's Check (real worker,
real sandbox) lists the reference's surviving mutant as a diff and Publish
stays refused; a hidden test that kills it lifts the score and Publish
works. Screenshots go to var/screenshots/authoring/."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.login import log_in_with_the_form
from tests.browser.test_authoring import CHECK_TIMEOUT_MS, DESKTOP, SHOTS, browser, fill_alternatives_and_domain, site  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.redis, pytest.mark.docker]

REFERENCE = "def add(a, b):\n    return a + b\n"
STARTER = "def add(a, b):\n    raise NotImplementedError\n"
VISIBLE = "def test_small_numbers(solution):\n    assert solution.add(2, 3) == 5\n"
# a * b passes both: 2 * 2 == 4 and 0 * 0 == 0.
WEAK_HIDDEN = "def test_doubles(solution):\n    assert solution.add(2, 2) == 4\n\n\ndef test_zero(solution):\n    assert solution.add(0, 0) == 0\n"
STRONG_HIDDEN = WEAK_HIDDEN + "\n\ndef test_negative_numbers(solution):\n    assert solution.add(-2, -3) == -5\n"
WRONG = {
    "minus.py": ("Subtracts.", "def add(a, b):\n    return a - b\n"),
    "off_by_one.py": ("Adds one too many.", "def add(a, b):\n    return a + b + 1\n"),
    "hard_coded.py": ("Returns the visible example's answer.", "def add(a, b):\n    return 5\n"),
}


@pytest.fixture
def owned_module(catalog: Any, instructor: Any) -> Any:
    from authoring.models import ModuleRole
    from exercises.models import Module, Track

    module = Module.objects.create(track=Track.objects.get(slug="llm-systems-frontier"), slug="warm-ups", external_id="P0.warm-ups.01",
                                   title="Warm-ups", order=9)
    ModuleRole.objects.create(module=module, user=instructor, role="editor")
    return module


def test_the_check_shows_the_surviving_mutant_as_a_diff_and_publish_waits_for_a_test_that_kills_it(
    site: str, browser: Any, owned_module: Any  # noqa: F811 - fixtures imported above
) -> None:
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)

    log_in_with_the_form(page, site, "ines", "instructor-pass-123", "/author/modules/warm-ups/")
    page.fill("#id_rung-slug", "add-two")
    page.fill("#id_rung-title", "Add two numbers")
    page.click("button:has-text('New rung')")
    expect(page.locator(".code-editor .cm-editor").first).to_be_visible()
    for field, text in (("starter_code", STARTER), ("reference_code", REFERENCE), ("visible_tests", VISIBLE), ("hidden_tests", WEAK_HIDDEN)):
        page.evaluate("([field, text]) => window.dojoAuthoring.setValue(field, text)", [field, text])
    page.locator("#hidden-rows input[name$='-description']").nth(0).fill("Two equal numbers.")
    page.locator("#hidden-rows input[name$='-description']").nth(1).fill("Zero and zero.")
    for index, (name, (description, code)) in enumerate(WRONG.items()):
        if index:
            page.click("#add-wrong")
        page.fill(f"input[name='wrong-{index}-name']", name)
        page.fill(f"input[name='wrong-{index}-description']", description)
        page.evaluate("([field, text]) => window.dojoAuthoring.setValue(field, text)", [f"wrong-{index}-code", code])
    fill_alternatives_and_domain(page)

    # Every fact holds, but one mutant of the reference survives the hidden tests.
    page.click("#save-check")
    expect(page.locator("#check .badge.solved")).to_have_text("passed", timeout=CHECK_TIMEOUT_MS)
    expect(page.locator(".facts tr.bad")).to_have_count(0)
    expect(page.locator("#mutation-score")).to_have_text("0.833")
    expect(page.locator("#mutation-score")).to_have_class("badge failed")
    expect(page.locator("#mutation")).to_contain_text("killed 5 of 6 mutants")
    survivor = page.locator("#mutation li.mutant")
    expect(survivor).to_have_count(1)
    expect(survivor.locator(".mutant-id")).to_contain_text("ReplaceBinaryOperator_Add_Mul-")
    expect(survivor.locator("pre.diff .removed")).to_have_text("-    return a + b")
    expect(survivor.locator("pre.diff .added")).to_have_text("+    return a * b")
    expect(page.locator("#publish")).to_be_disabled()
    expect(page.locator("#publish")).to_have_attribute("title", "Publishing needs a mutation score of at least 0.9")
    page.locator("#mutation").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "rung-surviving-mutant-1400x900.png"), full_page=True)

    # A hidden test that tells a + b from a * b kills it.
    page.evaluate("([field, text]) => window.dojoAuthoring.setValue(field, text)", ["hidden_tests", STRONG_HIDDEN])
    expect(page.locator("#hidden-rows input[name$='-name']").nth(2)).to_have_value("test_negative_numbers")
    page.locator("#hidden-rows input[name$='-description']").nth(2).fill("Two negative numbers.")
    page.click("#save-check")
    expect(page.locator("#check .badge.solved")).to_have_text("passed", timeout=CHECK_TIMEOUT_MS)
    expect(page.locator("#mutation-score")).to_have_text("1.000")
    expect(page.locator("#mutation-score")).to_have_class("badge solved")
    expect(page.locator("#mutation li.mutant")).to_have_count(0)
    expect(page.locator("#publish")).to_be_enabled()
    page.click("#publish")
    expect(page.locator(".flash")).to_contain_text("Published version 1")
    context.close()
    assert not [e for e in errors if "Failed to load resource" not in e], errors
