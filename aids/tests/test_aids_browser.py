"""Hints and reports in a real Chromium: reveal hints one by one in the
workspace, send a report, resolve it as the module's owner, read the note."""

from __future__ import annotations

from typing import Any

import pytest

from aids.constants import ReportStatus
from aids.models import HintReveal, ProblemReport
from authoring.models import ModuleRole
from exercises.models import Module
from mentor.tests.test_ask_box_browser import browser  # noqa: F401  (the shared Chromium fixture)
from tests.browser.login import signed_in_context

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _page_as(user: Any, live_server: Any, chromium: Any) -> Any:
    context = signed_in_context(chromium, live_server.url, user, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    return page


def test_hints_are_revealed_and_a_report_is_filed_resolved_and_read(
    live_server: Any, catalog: Any, learner: Any, instructor: Any, browser: Any  # noqa: F811
) -> None:
    from playwright.sync_api import expect

    page = _page_as(learner, live_server, browser)
    page.goto(f"{live_server.url}/rungs/kv-cache-size/")
    hints = page.locator("#hint-list > li")
    expect(hints).to_have_count(0)
    button = page.locator("#reveal-hint")
    expect(button).to_have_text("Show hint 1 of 3")
    button.click()
    expect(hints).to_have_count(1)
    expect(button).to_have_text("Show hint 2 of 3")
    button.click()
    expect(hints).to_have_count(2)
    expect(hints.nth(1).locator("code").first).to_be_visible()  # Markdown rendered, not raw backticks
    assert HintReveal.objects.filter(learner=learner).count() == 2

    page.locator("#report-problem summary").click()
    page.fill("#report-message", "The second visible test seems to expect GB, not GiB.")
    page.click("#report-form button[type=submit]")
    expect(page.locator("#report-status")).to_contain_text("Thank you")
    expect(page.locator("#my-reports li")).to_have_count(1)
    report = ProblemReport.objects.get()
    assert report.learner == learner and "def kv_cache_bytes" in report.code  # the editor's code went along
    assert page.errors == []

    ModuleRole.objects.create(module=Module.objects.get(slug="inference-and-serving"), user=instructor, role="editor")
    instructor_page = _page_as(instructor, live_server, browser)
    instructor_page.goto(f"{live_server.url}/author/modules/inference-and-serving/reports/")
    instructor_page.click(f"a[href='/author/modules/inference-and-serving/reports/{report.pk}/'] >> nth=0")
    expect(instructor_page.locator("pre").first).to_contain_text("def kv_cache_bytes")
    instructor_page.fill("textarea[name=note]", "Thanks: the text now says GiB everywhere.")
    instructor_page.click("button[value=resolve]")
    expect(instructor_page.locator("#report-state")).to_have_text("Resolved")
    assert ProblemReport.objects.get().status == ReportStatus.RESOLVED

    page.reload()
    expect(hints).to_have_count(2)  # revealed hints stay revealed
    expect(page.locator("#my-reports li .report-note")).to_contain_text("Thanks: the text now says GiB everywhere.")
    assert page.errors == [] and instructor_page.errors == []
