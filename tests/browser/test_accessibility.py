"""axe-core on every page a learner, a teacher, an instructor and an admin reach
(issue 59, item 16), at 1440 and 800 px wide: no violation of impact moderate
or worse.

axe-core is vendored (tests/browser/vendor/axe-<version>.min.js, from the npm
registry's axe-core tarball, MPL-2.0, its licence beside it) and injected into
each page. The state a page needs (a graded Run with failures, a hint shown, a
report, a course with an assignment and a notification, a Check's result) is
made in the database, so no worker is needed: one browser, one signed-in context
per role and width. ``A11Y_TABLE=path`` writes the route x rule table
docs/accessibility.md shows."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.login import signed_in_context
from tests.browser.test_learner_journey import browser  # noqa: F401  # the fixture: one Chromium

pytestmark = [pytest.mark.browser]

AXE = Path(__file__).with_name("vendor") / "axe-4.14.1.min.js"
WIDTHS = {"1440": {"width": 1440, "height": 900}, "800": {"width": 800, "height": 1000}}
SERIOUS = ("moderate", "serious", "critical")
RUNG = "kv-cache-size"
MODULE = "inference-and-serving"
CHECKED = "quantization-arithmetic"  # its rung editor shows a finished Check
FAILING = "continuous-batching"  # its workspace shows a failed Run; its draft has two empty descriptions
SPEED = "batched-kv-gather"  # a speed rung: its board, and a prediction field beside Submit
# Violations left on purpose, each of which must still be found (none today).
KNOWN: set[tuple[str, str, str]] = set()


@pytest.fixture
def world(live_server: Any, catalog: Any, learner: Any, instructor: Any, admin_user: Any) -> dict[str, Any]:
    """A learner with a failed Run, a passed Submit, a shown hint, a report and a course; the
    instructor owning the module and teaching the course, with a finished Check on a draft."""
    from django.utils import timezone

    from aids.models import HintReveal
    from aids.services import file_report
    from authoring.models import ModuleRole
    from courses.demo import create_demo_course
    from courses.feedback import add_feedback
    from exercises.models import Module, Rung
    from grader.models import Submission, SubmissionTestResult
    from grader.tallies import rebuild_tallies

    rung = Rung.objects.select_related("current_version").get(slug=RUNG)
    module = Module.objects.get(slug=MODULE)
    ModuleRole.objects.create(module=module, user=instructor, role="editor")
    course = create_demo_course(instructor, learner)
    now = timezone.now()
    done = {"status": "done", "started_at": now, "finished_at": now, "rung": rung, "rung_version": rung.current_version, "user": learner}
    run = Submission.objects.create(kind="run", code="def kv_cache_bytes():\n    return 0\n", outcome="failed",
                                    message="1 of 3 tests failed.", timings={"total": 0.4}, **done)
    SubmissionTestResult.objects.create(submission=run, order=0, name="test_counts_keys_and_values", outcome="passed", duration_s=0.01)
    SubmissionTestResult.objects.create(submission=run, order=1, name="test_bytes_per_element", outcome="failed", duration_s=0.01,
                                        message="assert 0 == 4096", detail="E   assert 0 == 4096")
    submit = Submission.objects.create(kind="submit", code="def kv_cache_bytes():\n    return 4096\n", outcome="passed",
                                       message="All tests passed.", timings={"total": 1.0}, **done)
    SubmissionTestResult.objects.create(submission=submit, order=0, name="test_hidden_shapes", outcome="passed", duration_s=0.2, hidden=True)
    HintReveal.objects.create(learner=learner, rung=rung, number=1, rung_version=rung.current_version)
    report = file_report(user=learner, rung=rung, message="The worked example uses GB where the test wants GiB.", code="print(1)\n")
    add_feedback(course=course, submission=submit, author=instructor, body="Name the scale factor.", line=1)
    # Another rung with only a failed Run: its rows of failures are the last result shown.
    failing = Rung.objects.select_related("current_version").get(slug=FAILING)
    failed = Submission.objects.create(kind="run", code="def f():\n    return 0\n", outcome="failed", message="2 of 3 tests failed.",
                                       **{**done, "rung": failing, "rung_version": failing.current_version})
    for order, outcome in enumerate(("passed", "failed", "error")):
        SubmissionTestResult.objects.create(submission=failed, order=order, name=f"test_case_{order}", outcome=outcome, duration_s=0.01,
                                            message="" if outcome == "passed" else "assert 0 == 4096", detail="E   assert 0 == 4096")
    _drafts(module, instructor)
    _speed_board(learner, admin_user)
    rebuild_tallies()  # the dashboards' counts of the rows written above, around the grading services
    return {"course": course, "submit": submit, "report": report, "site": str(live_server.url)}


def _drafts(module: Any, instructor: Any) -> None:
    """A draft after a failed Check (facts, wrong solutions, a surviving mutant) and a draft
    with two empty hidden-test descriptions (the problems the rung editor names)."""
    from django.utils import timezone

    from authoring.models import RungCheck
    from authoring.services import build_draft, draft_from_version
    from exercises.models import Rung

    checked = draft_from_version(module, Rung.objects.select_related("current_version").get(slug=CHECKED))
    checked.save()
    now = timezone.now()
    RungCheck.objects.create(
        draft=checked, content_hash=build_draft(checked).content_hash, status="done", started_at=now, finished_at=now, ok=False,
        seconds=12.5, requested_by=instructor, summary={"warnings": ["A wrong solution passes every visible test."]},
        facts=[{"claim": "reference.py passes every visible and hidden test", "ok": True, "evidence": "12 passed"},
               {"claim": "wrong/forgets_scale.py fails a hidden test", "ok": False, "evidence": "passed every test"},
               {"claim": "alternatives/loop.py passes every test, three seeds", "ok": True, "evidence": "3 seeds passed"}],
        mutation={"mutation_score": 0.8, "killed": 8, "mutants": 10, "seconds": 3.2, "surviving": [
            {"id": "m1", "line": 3, "function": "f", "diff": "--- a\n+++ b\n@@ -3 +3 @@\n-    return x * 2\n+    return x * 3\n"}]},
    )
    broken = draft_from_version(module, Rung.objects.select_related("current_version").get(slug=FAILING))
    meta = {name: dict(entry) for name, entry in dict(broken.hidden_test_meta).items()}
    for name in list(meta)[:2]:
        meta[name]["description"] = ""
    broken.hidden_test_meta = meta
    broken.save()


def _speed_board(learner: Any, other: Any) -> None:
    """The speed rung asks for a prediction, and its board has the learner and a named other learner on it."""
    from exercises.models import Rung
    from grader.models import SpeedStanding
    from grader.speed_board import set_board_name

    rung = Rung.objects.select_related("current_version").get(slug=SPEED)
    version = rung.current_version
    assert version is not None
    version.speed = {**version.speed, "section": {**version.speed["section"], "predict": "optional"}}
    version.save(update_fields=["speed"])
    for user, ratio in ((learner, 2.5), (other, 4.0)):
        SpeedStanding.objects.create(
            user=user, rung=rung, machine="Test CPU", best_ratio=ratio, measured_ratio=ratio, predicted=2.0, predicted_measured=ratio
        )
    set_board_name(other, "Gather Wizard")


def _routes(world: dict[str, Any], learner: Any) -> list[tuple[str, str, str]]:
    """(role, label, path) of every page the issue names; a #fragment names an action
    (ACTIONS) done on the page before axe runs. The workspace with results shows the
    shown hint and the learner's report too."""
    course = world["course"]
    assignment = course.assignments.first()
    submit = world["submit"]
    return [
        ("anonymous", "login", "/accounts/login/"),
        ("anonymous", "404", "/no-such-page/"),
        ("learner", "catalog", "/"),
        ("learner", "track", "/tracks/llm-systems-frontier/"),
        ("learner", "module page", f"/modules/{MODULE}/"),
        ("learner", "workspace, fresh", "/rungs/quantization-arithmetic/"),
        ("learner", "workspace, with results", f"/rungs/{RUNG}/"),
        ("learner", "workspace, failed Run", f"/rungs/{FAILING}/"),
        ("learner", "workspace in place, fresh", "/rungs/quantization-arithmetic/?embed=1"),
        ("learner", "workspace in place, with results", f"/rungs/{RUNG}/?embed=1"),
        ("learner", "workspace, history open", f"/rungs/{RUNG}/#open-history"),
        ("learner", "module page, mentor answer", f"/modules/{MODULE}/#ask-mentor"),
        ("learner", "my courses", "/courses/"),
        ("learner", "course page", f"/courses/{course.slug}/"),
        ("learner", "assignment", f"/courses/{course.slug}/assignments/{assignment.pk}/"),
        ("learner", "notifications", "/notifications/"),
        ("learner", "workspace, speed rung", f"/rungs/{SPEED}/#open-speed"),
        ("learner", "name on speed boards", "/accounts/board-name/"),
        ("instructor", "author home", "/author/"),
        ("instructor", "module editor", f"/author/modules/{MODULE}/"),
        ("instructor", "rung editor", f"/author/modules/{MODULE}/rungs/{RUNG}/"),
        ("instructor", "rung editor after Check", f"/author/modules/{MODULE}/rungs/{CHECKED}/"),
        ("instructor", "rung editor with problems", f"/author/modules/{MODULE}/rungs/{FAILING}/"),
        ("instructor", "module dashboard", f"/author/modules/{MODULE}/dashboard"),
        ("instructor", "rung dashboard", f"/author/modules/{MODULE}/rungs/{RUNG}/dashboard"),
        ("instructor", "speed rung dashboard", f"/author/modules/{MODULE}/rungs/{SPEED}/dashboard"),
        ("instructor", "course speed board", f"/courses/{course.slug}/rungs/{SPEED}/speed/"),
        ("instructor", "report queue", f"/author/modules/{MODULE}/reports/"),
        ("instructor", "report", f"/author/modules/{MODULE}/reports/{world['report'].pk}/"),
        ("instructor", "mentor questions", f"/mentor/modules/{MODULE}/questions"),
        ("instructor", "new module", "/author/modules/new"),
        ("instructor", "teacher tools", f"/courses/{course.slug}/tools/"),
        ("instructor", "gradebook", f"/courses/{course.slug}/gradebook/"),
        ("instructor", "timeline", f"/courses/{course.slug}/learners/{learner.pk}/timeline/"),
        ("instructor", "feedback", f"/courses/{course.slug}/submissions/{submit.pk}/feedback/"),
        ("admin", "admin index", "/admin/"),
        ("admin", "admin list", "/admin/grader/submission/"),
        ("admin", "admin detail", f"/admin/grader/submission/{submit.pk}/change/"),
        ("admin", "operations", "/author/operations/"),
    ]


def _open_history(page: Any) -> None:
    from playwright.sync_api import expect

    if page.locator("#tab-output").is_visible():  # narrow: the history is on the Output tab
        page.locator("#tab-output").click()
    page.locator("#history summary").click()
    expect(page.locator("#history-list li").first).to_be_visible()


def _ask_mentor(page: Any) -> None:
    from playwright.sync_api import expect

    page.locator("[data-mentor-form] textarea").fill("Why is decoding limited by memory bandwidth?")
    page.locator("[data-mentor-form] button[type=submit]").click()
    expect(page.locator("[data-mentor-answer]")).not_to_be_empty()
    page.wait_for_timeout(300)  # KaTeX renders the answer's math just after


def _open_speed_board(page: Any) -> None:
    from playwright.sync_api import expect

    if page.locator("#tab-instructions").is_visible():  # narrow: the board is on the Instructions tab
        page.locator("#tab-instructions").click()
    page.locator("#speed-boards summary").click()
    expect(page.locator("#speed-board-1")).to_be_visible()


ACTIONS: dict[str, Callable[[Any], None]] = {"open-history": _open_history, "ask-mentor": _ask_mentor, "open-speed": _open_speed_board}


def _violations(page: Any) -> list[dict[str, Any]]:
    """axe's violations of impact moderate or worse on ``page``: [{rule, impact, targets}]."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate("""async () => {
        // target-size (WCAG 2.2, 2.5.8: pointer targets of 24x24 px) is off in axe by default.
        const result = await axe.run(document, {resultTypes: ['violations'], rules: {'target-size': {enabled: true}}});
        return result.violations.map(v => ({rule: v.id, impact: v.impact, targets: v.nodes.map(n => n.target.join(' '))}));
    }""")
    return [v for v in found if v["impact"] in SERIOUS]


@pytest.fixture
def contexts(world: dict[str, Any], browser: Any, learner: Any, instructor: Any, admin_user: Any) -> Iterator[Callable[[str, str], Any]]:  # noqa: F811
    """``page(role, width)``: one page per role and width, its context signed in once."""
    opened: dict[tuple[str, str], Any] = {}
    users = {"learner": learner, "instructor": instructor, "admin": admin_user}

    def page(role: str, width: str) -> Any:
        if (role, width) not in opened:
            if role == "anonymous":
                context = browser.new_context(viewport=WIDTHS[width], bypass_csp=True)
            else:
                context = signed_in_context(browser, world["site"], users[role], viewport=WIDTHS[width], bypass_csp=True)
            opened[role, width] = context.new_page()
            opened[role, width].set_default_timeout(15_000)
        return opened[role, width]

    yield page
    for each in opened.values():
        each.context.close()


def test_every_page_has_no_moderate_or_worse_axe_violation(world: dict[str, Any], contexts: Any, learner: Any) -> None:
    table: dict[str, dict[str, dict[str, int]]] = {}
    details: list[str] = []
    known: set[tuple[str, str, str]] = set()
    for width in WIDTHS:
        for role, label, path in _routes(world, learner):
            page = contexts(role, width)
            path, _, action = path.partition("#")
            page.goto(world["site"] + path)
            page.wait_for_load_state("load")
            if action:
                ACTIONS[action](page)
            found = _violations(page)
            counts: dict[str, int] = {}
            for violation in found:
                counts[violation["rule"]] = counts.get(violation["rule"], 0) + len(violation["targets"])
                if (width, label, violation["rule"]) in KNOWN:
                    known.add((width, label, violation["rule"]))
                    continue
                details.append(f"{width} {label} {violation['rule']} ({violation['impact']}): {violation['targets'][:3]}")
            table.setdefault(f"{role}: {label}", {})[width] = counts
    if os.environ.get("A11Y_TABLE"):
        Path(os.environ["A11Y_TABLE"]).write_text(json.dumps(table, indent=1))
    assert not details, "\n".join(details)
    assert known == KNOWN, f"fixed, take them out of KNOWN: {sorted(KNOWN - known)}"


def test_only_the_result_summary_is_announced(world: dict[str, Any], contexts: Any) -> None:
    # Per-test rows and the key hints were live regions too: a Run of 20 tests was read out
    # row by row, and every focus of the editor read its key hints (issue 59, item 17).
    page = contexts("learner", "1440")
    page.goto(world["site"] + f"/rungs/{RUNG}/")
    page.locator("#tests li, #tests-passed li").first.wait_for(state="attached")  # the last result is shown
    live = page.evaluate("""() => Array.from(document.querySelectorAll(
        '#panel-code [aria-live]:not([aria-live=off]), #panel-output [aria-live]:not([aria-live=off]), #panel-code [role=status], #panel-output [role=status], #panel-output [role=alert]'
    )).map(element => element.id || element.className)""")
    # cm-announced: CodeMirror's own region, which speaks only for its search and completion.
    assert [name for name in live if name != "cm-announced"] == ["status"]


def test_focus_is_never_hidden_under_the_sticky_tabs_or_run_bar(world: dict[str, Any], contexts: Any) -> None:
    # WCAG 2.2, 2.4.11 (issue 59, item 18): at 800 px the tabs stick to the top and the Run bar
    # to the bottom of the window; whatever Tab reaches is scrolled into view clear of both.
    page = contexts("learner", "800")
    for tab in ("instructions", "code", "output"):
        page.goto(world["site"] + f"/rungs/{RUNG}/")
        page.locator(f"#tab-{tab}").click()
        hidden: list[str] = []
        for _ in range(60):
            page.keyboard.press("Tab")
            where = page.evaluate("""() => {
                const element = document.activeElement, box = element.getBoundingClientRect();
                if (!box.height || element === document.body || element.closest('#runbar, .ws-tabs')) return null;
                // Its first 16 px (all of it, if smaller): on screen, and on top there, not under a sticky bar.
                const x = box.left + Math.min(box.width, 16) / 2, y = box.top + Math.min(box.height, 16) / 2;
                const name = `${element.tagName.toLowerCase()}#${element.id}.${element.className}`;
                if (y < 0 || y > window.innerHeight) return `${name}: off screen`;
                const hit = document.elementFromPoint(Math.max(0, x), y);
                const bar = hit && !element.contains(hit) && hit.closest('#runbar, .ws-tabs');
                return bar ? `${name}: under ${bar.id || bar.className}` : null;
            }""")
            if where:
                hidden.append(where)
        assert not hidden, (tab, hidden)
