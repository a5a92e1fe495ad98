"""An instructor authors a small rung in a real Chromium, from an empty module
to published: Markdown with a live KaTeX preview, CodeMirror editors, a Check
on the real worker and sandbox, Publish. A learner then solves it, and the
dashboards show it. Screenshots go to var/screenshots/authoring/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.login import log_in_with_the_form

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.redis, pytest.mark.docker]

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "var" / "screenshots" / "authoring"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"]
DESKTOP = {"width": 1400, "height": 900}
CHECK_TIMEOUT_MS = 300_000

REFERENCE = "def add(a, b):\n    return a + b\n"
STARTER = "def add(a, b):\n    raise NotImplementedError\n"
VISIBLE = "def test_small_numbers(solution):\n    assert solution.add(2, 3) == 5\n"
HIDDEN = ("def test_negative_numbers(solution):\n    assert solution.add(-2, -3) == -5\n\n\n"
          "def test_zero(solution):\n    assert solution.add(0, 7) == 7\n")
WRONG = {
    "ignores_negatives.py": ("Treats negative numbers as zero.", "def add(a, b):\n    return max(a, 0) + max(b, 0)\n"),
    "absolute.py": ("Adds the absolute values.", "def add(a, b):\n    return abs(a) + abs(b)\n"),
    "multiplies.py": ("Multiplies instead of adding.", "def add(a, b):\n    return a * b\n"),
}
# Two independent correct solutions and the documented domain: a Check requires both (issue 58).
ALTERNATIVES = {
    "swapped.py": ("Adds in the other order.", "def add(a, b):\n    return b + a\n"),
    "builtin_sum.py": ("Uses sum().", "def add(a, b):\n    return sum((a, b))\n"),
}
DOMAIN = "add:\n  args:\n    a: {type: int}\n    b: {type: int}\n"
INSTRUCTIONS = "# Add two numbers\n\nWrite `add(a, b)` returning $a + b$ for any integers, negative ones included:\n\n$$\\operatorname{add}(a, b) = a + b$$\n"


def fill_solution_rows(page: Any, prefix: str, solutions: dict[str, tuple[str, str]]) -> None:
    """Solutions in the editor's rows of ``prefix`` ("wrong", "alt"): name, description, code,
    as an author types them (the first row is there; "#add-<prefix>" adds the others)."""
    for index, (name, (description, code)) in enumerate(solutions.items()):
        if index:
            page.click(f"#add-{prefix}")
        page.fill(f"input[name='{prefix}-{index}-name']", name)
        page.fill(f"input[name='{prefix}-{index}-description']", description)
        page.evaluate("([field, text]) => window.dojoAuthoring.setValue(field, text)", [f"{prefix}-{index}-code", code])


def fill_alternatives_and_domain(page: Any) -> None:
    """Two alternatives in the editor's rows and the domain's YAML, as an author types them."""
    fill_solution_rows(page, "alt", ALTERNATIVES)
    page.evaluate("([field, text]) => window.dojoAuthoring.setValue(field, text)", ["domain_yaml", DOMAIN])


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
def site(live_server: Any, catalog: Any, worker: Any, redis_url: str, settings: Any) -> str:
    settings.REDIS_URL = redis_url
    return str(live_server.url)


def test_an_instructor_authors_checks_and_publishes_a_rung_and_a_learner_solves_it(site: str, browser: Any, instructor: Any, admin_user: Any) -> None:
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(f"{message.text} at {message.location.get('url')}") if message.type == "error" else None)
    failed: list[str] = []
    page.on("response", lambda response: failed.append(f"{response.status} {response.url}") if response.status >= 400 else None)

    log_in_with_the_form(page, site, "ines", "instructor-pass-123", "/author/")
    expect(page.locator("h1")).to_have_text("Your modules")

    # An empty module.
    page.click("text=New module")
    page.select_option("#id_track", label="LLM Systems & Frontier")
    page.fill("#id_slug", "warm-ups")
    page.fill("#id_external_id", "P0.warm-ups.01")
    page.fill("#id_title", "Warm-ups")
    page.click("button:has-text('Create module')")
    expect(page.locator(".flash")).to_contain_text("Module “Warm-ups” created")

    # A new rung: the editor, with a live preview typeset by KaTeX.
    page.fill("#id_rung-slug", "add-two")
    page.fill("#id_rung-title", "Add two numbers")
    page.click("button:has-text('New rung')")
    expect(page.locator(".code-editor .cm-editor").first).to_be_visible()
    page.fill("#id_instructions_md", INSTRUCTIONS)
    expect(page.locator("#preview .katex").first).to_be_visible()
    expect(page.locator("#preview h1")).to_have_text("Add two numbers")
    for field, text in (("starter_code", STARTER), ("reference_code", REFERENCE), ("visible_tests", VISIBLE), ("hidden_tests", HIDDEN)):
        page.evaluate("([field, text]) => window.dojoAuthoring.setValue(field, text)", [field, text])
    # The description rows follow the hidden test file.
    expect(page.locator("#hidden-rows input[name$='-name']").nth(0)).to_have_value("test_negative_numbers")
    expect(page.locator("#hidden-rows input[name$='-name']").nth(1)).to_have_value("test_zero")
    expect(page.locator("#hidden-rows tr.orphan")).to_have_count(0)
    page.locator("#hidden-rows input[name$='-description']").nth(0).fill("Two negative numbers.")
    page.locator("#hidden-rows input[name$='-description']").nth(1).fill("Zero on one side.")
    page.locator("#hidden-rows select").nth(1).select_option("after_solve")
    fill_solution_rows(page, "wrong", WRONG)
    fill_alternatives_and_domain(page)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(SHOTS / "rung-editor-1400x900.png"))

    # Check in the real sandbox, through the queue; the page follows it.
    page.click("#save-check")
    expect(page.locator(".flash")).to_contain_text("the Check is queued")
    expect(page.locator("#check .badge.solved")).to_have_text("passed", timeout=CHECK_TIMEOUT_MS)
    # reference x2, starter, 3 wrong, 2 alternatives, the domain, and 4 about the set
    expect(page.locator("table.facts:not(.solutions) tr.ok")).to_have_count(13)
    expect(page.locator("table.facts.solutions tr.ok")).to_have_count(5)  # 3 wrong, 2 alternatives
    expect(page.locator(".facts tr.bad")).to_have_count(0)
    expect(page.locator("#publish")).to_be_enabled()
    page.screenshot(path=str(SHOTS / "rung-checked-1400x900.png"), full_page=True)
    page.click("#publish")
    expect(page.locator(".flash")).to_contain_text("Published version 1")

    # A learner solves it.
    learner_context = browser.new_context(viewport=DESKTOP)
    learner = learner_context.new_page()
    learner.set_default_timeout(30_000)
    learner.goto(site + "/signup/")
    learner.fill("#id_username", "lena")
    learner.fill("#id_password1", "a-long-learner-password-1")
    learner.fill("#id_password2", "a-long-learner-password-1")
    learner.click("button[type=submit]")
    learner.goto(site + "/rungs/add-two/")
    expect(learner.locator(".cm-editor")).to_be_visible()
    expect(learner.locator("#panel-instructions .katex").first).to_be_visible()
    learner.evaluate("code => window.dojoWorkspace.setCode(code)", WRONG["ignores_negatives.py"][1])
    learner.click("#submit-button")
    expect(learner.locator("#status")).to_have_class("status failed", timeout=CHECK_TIMEOUT_MS)
    expect(learner.locator("#tests")).to_contain_text("Two negative numbers.")
    learner.evaluate("code => window.dojoWorkspace.setCode(code)", REFERENCE)
    learner.click("#submit-button")
    expect(learner.locator("#status")).to_have_class("status passed", timeout=CHECK_TIMEOUT_MS)
    learner_context.close()

    # The instructor sees it on the dashboards.
    page.goto(site + "/author/modules/warm-ups/dashboard")
    expect(page.locator("svg.chart")).to_have_count(5)
    expect(page.locator("table").first).to_contain_text("add-two")
    page.screenshot(path=str(SHOTS / "module-dashboard-1400x900.png"), full_page=True)
    expect(page.locator("svg.chart").nth(2)).to_contain_text("test_negative_numbers")
    page.goto(site + "/author/modules/warm-ups/rungs/add-two/dashboard")
    expect(page.locator("svg.chart")).to_have_count(5)
    page.screenshot(path=str(SHOTS / "rung-dashboard-1400x900.png"), full_page=True)
    # Not an owner of the shipped module: refused.
    refused = page.goto(site + "/author/modules/inference-and-serving/dashboard")
    assert refused is not None and refused.status == 403
    context.close()

    # An admin rejudges the learner's Submits through the normal queue, and watches operations.
    admin = browser.new_context(viewport=DESKTOP)
    ops = admin.new_page()
    ops.set_default_timeout(30_000)
    log_in_with_the_form(ops, site, "ada", "admin-pass-789", "/author/")
    ops.goto(site + "/admin/grader/submission/?kind__exact=submit&q=add-two")
    ops.check("#action-toggle")
    ops.select_option("select[name=action]", "rejudge_against_current")
    ops.click("button[name=index]")
    expect(ops.locator("#rejudge-status")).to_contain_text("2 of 2", timeout=CHECK_TIMEOUT_MS)
    expect(ops.locator("#changed-count")).to_have_text("0")  # same version, same code: same outcomes
    ops.screenshot(path=str(SHOTS / "rejudge-preview-1400x900.png"), full_page=True)
    # A submission under review: highlighted code, per-test results, and its rejudges.
    ops.click("#rejudge-status ~ table a >> nth=-1")
    expect(ops.locator(".highlighted-code")).to_contain_text("max(a, 0)")
    expect(ops.locator("body")).to_contain_text("test_negative_numbers")
    expect(ops.locator("body")).to_contain_text("Rejudges (old and new grades)")
    ops.screenshot(path=str(SHOTS / "admin-submission-1400x900.png"), full_page=True)
    ops.goto(site + "/author/operations/")
    expect(ops.locator("text=worker@test")).to_be_visible()
    ops.screenshot(path=str(SHOTS / "operations-1400x900.png"), full_page=True)
    admin.close()
    # The one refusal above is expected; nothing else may fail to load.
    assert failed == [f"403 {site}/author/modules/inference-and-serving/dashboard"], failed
    # Failed loads are checked above, by URL; here: script errors.
    assert not [e for e in errors if "Failed to load resource" not in e], errors
