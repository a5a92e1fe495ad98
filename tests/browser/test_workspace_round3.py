"""The workspace's verdicts and layout, round three (issue 59), in a real
Chromium at 1440x900 and 800x1000: a Submit the memory limit stopped names the
test and keeps the others' results; a Submit's timings read "under 1 s" and
"about 2 s"; attempts are numbered per learner and rung; the size limit is
stated beside the editor and an oversized submission clears the stale
result; another tab's "still being graded" notice gives way to that job's
result once it ends; an ended session shows in the header; learners never
see a module's internal ids.

Lean on purpose: one page load per width carries the verdict checks, the
grades are made by grader.services with a fake runner (no worker, no Docker)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser.login import signed_in_context
from tests.browser.test_learner_journey import browser  # noqa: F401  # the fixture: one Chromium
from tests.browser.test_workspace import KV, SHOTS, _fast_password_hashing, _open, _set_code  # noqa: F401  # an autouse fixture

pytestmark = [pytest.mark.browser]

WIDE = {"width": 1440, "height": 900}
NARROW = {"width": 800, "height": 1000}
BOTH = [pytest.param(WIDE, id="1440"), pytest.param(NARROW, id="800")]


@pytest.fixture
def page_site(live_server: Any, catalog: Any, learner: Any) -> str:
    SHOTS.mkdir(parents=True, exist_ok=True)
    return str(live_server.url)


def _grade(user: Any, rung: Any, kind: str, result: Any) -> Any:
    from grader import services
    from sandbox.testing import FakeRunner

    submission = services.submit_solution(user=user, rung=rung, kind=kind, code=(KV / "starter.py").read_text())
    services.grade_submission(submission.pk, runner=FakeRunner(result))
    return submission


def _show_output(page: Any, viewport: dict[str, int]) -> None:
    if viewport is NARROW:
        page.click("#tab-output")


@pytest.mark.parametrize("viewport", BOTH)
def test_verdicts_name_the_test_word_timings_number_attempts_and_drop_stale_results(
    page_site: str, browser: Any, learner: Any, other_learner: Any, viewport: dict[str, int], enqueued: Any  # noqa: F811
) -> None:
    from playwright.sync_api import expect

    from exercises.models import Rung
    from grader import messages
    from grader.constants import Kind, Outcome, Status
    from grader.models import Submission, SubmissionTestResult
    from sandbox.jobs import CaseResult, Failure, planned_tests
    from sandbox.testing import job_result

    rung = Rung.objects.select_related("current_version").get(slug="kv-cache-size")
    version = rung.current_version
    assert version is not None
    hidden = planned_tests(version.hidden_tests)
    # Another learner's attempts in between: global ids with gaps, numbers without.
    _grade(learner, rung, Kind.RUN, job_result("failed"))
    _grade(other_learner, rung, Kind.RUN, job_result("failed"))
    killed = CaseResult(name=hidden[1], outcome="failed", duration_s=1.5, failure=Failure(code="learner_died", signal=9))
    _grade(learner, rung, Kind.SUBMIT,
           job_result("memory_limit", [CaseResult(name=hidden[0], outcome="passed"), killed], timings={"run_s": 0.31, "total_s": 2.4}))

    page = _open(browser, page_site, viewport, learner)
    # The size limit is stated beside the editor before it is met.
    expect(page.locator("#size-state")).to_be_visible()
    expect(page.locator("#size-state")).to_contain_text("/ 65,536 bytes")
    _show_output(page, viewport)
    # Item 5: the test that was running is named, its row says so, the one before it kept its pass.
    expect(page.locator("#status")).to_contain_text(messages.MEMORY_IN_TEST.format(name=hidden[1]))
    expect(page.locator("#tests li").first).to_contain_text(hidden[1])
    expect(page.locator("#tests li").first).to_contain_text(messages.TEST_HIT_MEMORY)
    expect(page.locator("#tests-passed li")).to_have_text([f"✔ {hidden[0]} passed (hidden test)"])
    # Item 6: coarse timings in coarse words.
    expect(page.locator("#timings")).to_contain_text("under 1 s")
    expect(page.locator("#timings")).to_contain_text("about 2 s")
    assert ".00 s" not in page.locator("#timings").inner_text()
    # Item 7: the learner's own numbers.
    page.click("#history summary")
    expect(page.locator("#history-list li button")).to_have_count(2)
    labels = page.locator("#history-list li button").all_inner_texts()
    assert labels[0].startswith("Submit #2 ·") and labels[1].startswith("Run #1 ·"), labels

    # Item 9: an oversized submission clears the stale result under its refusal.
    if viewport is NARROW:
        page.click("#tab-code")
    _set_code(page, "#" * 70_000)
    page.click("#submit-button")
    expect(page.locator("#status")).to_have_class("status error")
    expect(page.locator("#tests li")).to_have_count(0)
    expect(page.locator("#test-summary")).to_be_hidden()
    expect(page.locator("#timings")).to_be_hidden()

    # Item 10: a job of this rung still graded from another tab; once it ends its result replaces the notice.
    other_tab = Submission.objects.create(user=learner, rung=rung, rung_version=version, kind=Kind.RUN, code="x = 1\n", status=Status.RUNNING)
    _set_code(page, (KV / "starter.py").read_text())
    page.click("#run-button")
    expect(page.locator("#status")).to_have_text(messages.IN_FLIGHT)
    SubmissionTestResult.objects.create(submission=other_tab, order=0, name="test_other_tab", outcome="failed", message="wrong")
    Submission.objects.filter(pk=other_tab.pk).update(status=Status.DONE, outcome=Outcome.FAILED)
    expect(page.locator("#status")).to_contain_text("From your other tab · Run failed", timeout=15_000)
    expect(page.locator("#tests li").first).to_contain_text("test_other_tab")
    # The other job may end between the refusal and the page's look at the history: its result still shows.
    ended_meanwhile = Submission.objects.create(user=learner, rung=rung, rung_version=version, kind=Kind.RUN, code="x = 2\n", status=Status.RUNNING)

    def _end_it_first(route: Any) -> None:
        SubmissionTestResult.objects.create(submission=ended_meanwhile, order=0, name="test_ended_meanwhile", outcome="failed", message="wrong")
        Submission.objects.filter(pk=ended_meanwhile.pk).update(status=Status.DONE, outcome=Outcome.FAILED)
        route.continue_()

    page.route("**/history**", _end_it_first, times=1)
    page.click("#run-button")
    expect(page.locator("#tests li").first).to_contain_text("test_ended_meanwhile", timeout=15_000)
    expect(page.locator("#status")).to_contain_text("From your other tab · Run failed")

    # Item 10: the session ends; coming back to the tab, the header stops naming the learner and no "Draft saved".
    page.context.clear_cookies(name="sessionid")
    page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")
    expect(page.locator(".topbar .who")).to_have_text("Logged out")
    expect(page.locator("#save-state")).not_to_have_text("Draft saved")
    expect(page.locator(".topbar form[action*=logout]")).to_be_hidden()
    page.context.close()


def test_learners_see_module_titles_not_internal_ids(page_site: str, browser: Any, learner: Any) -> None:  # noqa: F811
    from playwright.sync_api import expect

    for viewport in (WIDE, NARROW):
        page = signed_in_context(browser, page_site, learner, viewport=viewport).new_page()
        page.goto(page_site + "/modules/inference-and-serving/")
        expect(page.locator("h1")).to_have_text("Inference & serving")
        expect(page.locator("#module-id")).to_have_count(0)
        expect(page.locator("main")).not_to_contain_text("P10.llm-systems-frontier")
        expect(page.locator("main")).not_to_contain_text("Audience")
        page.context.close()


# Code blocks of the instructions wider than their box (clipped, or scrolled out of reach).
CLIPPED_CODE = "() => [...document.querySelectorAll('#panel-instructions pre')].filter(p => p.scrollWidth > p.clientWidth + 1).length"


def _lines_shown(frame_or_page: Any) -> float:
    """How many editor lines the editor's box holds."""
    return float(frame_or_page.evaluate(
        "() => document.querySelector('.cm-scroller').clientHeight / document.querySelector('.cm-line').getBoundingClientRect().height"
    ))


def test_the_full_page_editor_shows_25_lines_and_instruction_code_wraps(page_site: str, browser: Any, learner: Any) -> None:  # noqa: F811
    """Items 11 and 12 on the full page: 25 lines at 1440x900; at 800 a rung not started opens on its
    Instructions, the title stays above the tabs, and your solution sits over the reference."""
    from playwright.sync_api import expect

    page = _open(browser, page_site, WIDE, learner)
    assert _lines_shown(page) >= 25, _lines_shown(page)
    page.screenshot(path=str(SHOTS / "workspace-1440x900-round3.png"))
    assert page.evaluate(CLIPPED_CODE) == 0, "a code block in the instructions runs past its panel"
    page.context.close()

    page = _open(browser, page_site, NARROW, learner, wait_for_editor=False)
    expect(page.locator("#tab-instructions")).to_have_attribute("aria-selected", "true")
    assert page.evaluate(CLIPPED_CODE) == 0, "a code block in the instructions runs past its panel"
    expect(page.locator("#rung-title")).to_be_in_viewport()
    page.click("#tab-output")
    expect(page.locator(".ws-title")).to_be_visible()
    expect(page.locator(".ws-title")).to_have_text(page.locator("#rung-title").inner_text())
    page.screenshot(path=str(SHOTS / "workspace-800-output-title.png"))
    page.evaluate("() => { document.getElementById('reference').hidden = false; }")
    yours, reference = (page.locator(".compare figure").nth(i).bounding_box() for i in (0, 1))
    assert yours and reference and reference["y"] >= yours["y"] + yours["height"] - 1, "stacked, not side by side"
    assert reference["width"] > NARROW["width"] * 0.8
    page.context.close()


@pytest.mark.parametrize("viewport", BOTH)
def test_in_place_the_workspace_fills_the_window_and_the_ladder_follows_it(
    page_site: str, browser: Any, learner: Any, viewport: dict[str, int], enqueued: Any  # noqa: F811
) -> None:
    """Items 1-4: in place the workspace is one window high with the page as its one scroller; a Submit
    and a pass update the ladder live; "Next rung" opens rung 2's own entry; links leave the frame."""
    from playwright.sync_api import expect

    from grader import services
    from grader.models import Submission
    from sandbox.testing import FakeRunner, job_result

    page = signed_in_context(browser, page_site, learner, viewport=viewport).new_page()
    page.set_default_timeout(30_000)
    page.goto(page_site + "/modules/inference-and-serving/")
    state = page.locator('.state[data-rung="kv-cache-size"]')
    expect(state).to_have_text("not started")
    page.click("#rung-kv-cache-size .open-here")
    frame = page.frame_locator("#frame-kv-cache-size iframe")
    expect(frame.locator(".cm-editor")).to_be_attached()
    page.wait_for_function("() => document.querySelector('#frame-kv-cache-size iframe').style.height !== ''")
    box = page.locator("#frame-kv-cache-size iframe").bounding_box()
    assert box is not None
    inner = page.frame_locator("#frame-kv-cache-size iframe").locator("html")
    scroll = inner.evaluate("e => [e.scrollHeight, e.clientHeight]")
    if viewport is WIDE:
        # The frame is as tall as its page (no scroller of its own), its workspace one window high.
        assert scroll[0] <= scroll[1] + 1, scroll
        workspace = frame.locator("#workspace").bounding_box()
        assert workspace and viewport["height"] - 120 <= workspace["height"] <= viewport["height"], workspace
        lines = frame.locator("html").evaluate(
            "() => document.querySelector('.cm-scroller').clientHeight / document.querySelector('.cm-line').getBoundingClientRect().height")
        assert lines >= 25, lines
    else:
        # One window high, the Run bar at its bottom: no blank under it.
        assert viewport["height"] - 120 <= box["height"] <= viewport["height"], box
        bar = frame.locator("#runbar").bounding_box()
        assert bar and box["y"] + box["height"] - (bar["y"] + bar["height"]) < 16, (box, bar)

    page.screenshot(path=str(SHOTS / f"module-in-place-{viewport['width']}.png"))
    # Submit in place: the ladder says "attempted" at once, "solved" after the pass, with no reload.
    frame.locator("#submit-button").click()
    expect(state).to_have_text("attempted")
    submission = Submission.objects.get()
    services.grade_submission(submission.pk, runner=FakeRunner(job_result("passed")))
    expect(state).to_have_text("✓ solved", timeout=15_000)
    expect(page.locator("#ladder-count")).to_contain_text(re.compile(r" 1/\d+ solved"))

    # "Next rung" opens rung 2's own entry (rung 1's closes).
    if viewport is NARROW:
        frame.locator("#tab-output").click()
    frame.locator("#next-rung").click()
    expect(page.locator("#frame-quantization-arithmetic iframe")).to_be_visible()
    expect(page.locator("#rung-kv-cache-size .open-here")).to_have_text("Open here")
    expect(page.locator("#rung-quantization-arithmetic .open-here")).to_have_text("Close")

    # A link added after load (a mentor answer's) leaves the frame for the whole window.
    second = page.frame_locator("#frame-quantization-arithmetic iframe")
    expect(second.locator("#panel-instructions")).to_be_attached()
    second.locator("html").evaluate("""() => { const a = document.createElement('a'); a.id = 'late-link';
        a.href = '/modules/training-at-scale/'; a.textContent = 'Training'; document.getElementById('panel-instructions').prepend(a); }""")
    if viewport is NARROW:
        second.locator("#tab-instructions").click()
    second.locator("#late-link").click()
    page.wait_for_url("**/modules/training-at-scale/")
    expect(page.locator("h1")).to_have_text("Training at scale")
    page.context.close()
