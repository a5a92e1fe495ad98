"""A teacher's class in a real Chromium (issue 57): a teacher creates a course
and an assignment, a learner joins by link and passes one rung before the due
date; the teacher moves the due date into the past and the learner passes the
second rung after it; the gradebook shows both, the late one marked; the
teacher leaves a comment on a line of the late Submit, and the learner sees
the notification and the comment in the workspace.

Grading goes through the real worker and sandbox. Screenshots go to
var/screenshots/courses/; docs/courses.md's are copies in docs/img/
(courses-*.png, in 128 colours), which ``COURSES_DOCS_SHOTS=1`` writes."""

from __future__ import annotations

import datetime as dt
import os
import re
import time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.browser.login import signed_in_context
from tests.browser.test_learner_journey import browser  # noqa: F401  # the fixture: one Chromium

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.redis, pytest.mark.docker]

ROOT = Path(__file__).resolve().parents[2]
RUNGS = ROOT / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs"
SHOTS = ROOT / "var" / "screenshots" / "courses"
DESKTOP = {"width": 1280, "height": 860}
GRADING_TIMEOUT_MS = 180_000
ZONE = "Europe/Berlin"
COMMENT = "Name the scale factor: `scale = max_abs / 127` reads better than the bare division."


@pytest.fixture
def site(live_server: Any, catalog: Any, worker: Any, redis_url: str, settings: Any) -> str:
    # The SSE view runs in live_server's thread of this process: point it at the test Redis.
    settings.REDIS_URL = redis_url
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return str(live_server.url)


def _local(at: dt.datetime) -> str:
    """``at`` as the course's datetime-local inputs take it, to the second."""
    return at.astimezone(ZoneInfo(ZONE)).strftime("%Y-%m-%dT%H:%M:%S")


def _submit_reference(page: Any, site: str, rung: str, folder: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{site}/rungs/{rung}/")
    expect(page.locator(".cm-editor")).to_be_visible()
    page.evaluate("code => window.dojoWorkspace.setCode(code)", (RUNGS / folder / "reference.py").read_text())
    page.click("#submit-button")
    expect(page.locator("#status")).to_have_class("status passed", timeout=GRADING_TIMEOUT_MS)


def test_a_teacher_runs_a_class_late_work_is_marked_and_feedback_reaches_the_learner(
    site: str, browser: Any, instructor: Any, learner: Any  # noqa: F811
) -> None:
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    teacher = signed_in_context(browser, site, instructor, viewport=DESKTOP).new_page()
    student = signed_in_context(browser, site, learner, viewport=DESKTOP).new_page()
    for page in (teacher, student):
        page.set_default_timeout(30_000)
    failed: list[str] = []
    for page in (teacher, student):
        page.on("response", lambda response: failed.append(f"{response.status} {response.url}") if response.status >= 500 else None)

    # The teacher creates a course on the first module.
    teacher.goto(site + "/courses/new/")
    teacher.fill("#id_title", "LLM Systems, spring")
    teacher.fill("#id_slug", "llm-spring")
    teacher.fill("#id_term", "Spring 2027")
    teacher.fill("#id_time_zone", ZONE)
    teacher.get_by_label("Inference & serving", exact=False).first.check()
    teacher.click("#course-form button[type=submit]")
    expect(teacher.locator("h1")).to_have_text("LLM Systems, spring")

    # An assignment of two rungs, due in a week; late work half a point for a week more.
    now = dt.datetime.now(dt.UTC)
    teacher.click("#new-assignment")
    teacher.fill("#id_title", "Week 1: memory arithmetic")
    teacher.get_by_label("Size the KV cache", exact=False).check()
    teacher.get_by_label("Quantization arithmetic", exact=False).check()
    teacher.fill("#id_opens_at", _local(now - dt.timedelta(hours=1)))
    teacher.fill("#id_due_at", _local(now + dt.timedelta(days=7)))
    teacher.select_option("#id_late_policy", "penalty")
    teacher.fill("#id_hard_close_at", _local(now + dt.timedelta(days=14)))
    teacher.fill("#id_late_factor", "0.5")
    teacher.click("#assignment-form button[type=submit]")
    expect(teacher.locator("h1")).to_contain_text("Week 1: memory arithmetic")
    assignment_url = teacher.url

    # A join link, which the learner opens.
    teacher.goto(f"{site}/courses/llm-spring/")
    teacher.click("#link-form button[type=submit]")
    link = teacher.locator("#links tbody a").first.get_attribute("href")
    assert link and re.fullmatch(r"/courses/join/[A-Z0-9-]+/", link), link
    teacher.screenshot(path=str(SHOTS / "courses-course-page.png"), full_page=True)
    student.goto(site + link)
    student.click("#join-confirm button")
    expect(student.locator("#my-assignments")).to_contain_text("Week 1: memory arithmetic")
    student.screenshot(path=str(SHOTS / "courses-learner-course.png"), full_page=True)

    # Before the due date: the first rung.
    _submit_reference(student, site, "kv-cache-size", "01-kv-cache-size")

    # The teacher moves the due date to now (the first pass is before it, to the second);
    # the second rung is passed after it.
    due = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(seconds=1)
    teacher.goto(assignment_url + "edit/")
    teacher.fill("#id_due_at", _local(due))
    teacher.click("#assignment-form button[type=submit]")
    expect(teacher.locator("h1")).to_contain_text("Week 1: memory arithmetic")
    time.sleep(max(0.0, (due - dt.datetime.now(dt.UTC)).total_seconds()))
    _submit_reference(student, site, "quantization-arithmetic", "02-quantization-arithmetic")

    # The gradebook: the assignment counts 75 % (one rung on time, one late at 0.5), marked late;
    # the rungs' pages say which pass was on time and which late.
    teacher.goto(f"{site}/courses/llm-spring/")
    teacher.locator("#staff-tools").get_by_role("link", name="Gradebook").click()
    row = teacher.locator("#gradebook tbody tr", has_text=learner.username)
    expect(row.locator("td").nth(1)).to_contain_text("75%")
    expect(row.locator(".badge", has_text="late")).to_have_count(1)
    teacher.screenshot(path=str(SHOTS / "courses-gradebook.png"), full_page=True)
    for title, timing in (("Size the KV cache", "on time"), ("Quantization arithmetic", "late")):
        if timing == "late":
            teacher.go_back()
        teacher.locator(f"#gradebook thead a[title='{title}']").click()
        expect(teacher.locator("#rung-learners tbody tr", has_text=learner.username).locator(".badge")).to_have_text(timing)

    # Drill down to the late Submit; then, from the learner's timeline (newest first), comment on its first line.
    teacher.get_by_role("link", name=learner.username).click()
    expect(teacher.locator("#attempts .badge", has_text="late")).to_have_count(1)
    teacher.goto(f"{site}/courses/llm-spring/")
    teacher.locator("#staff-tools").get_by_role("link", name="Teacher tools").click()
    teacher.locator("#tool-learners").get_by_role("link", name=learner.username).click()
    teacher.screenshot(path=str(SHOTS / "courses-timeline.png"), full_page=True)
    teacher.get_by_role("link", name="Code, results and feedback").first.click()
    expect(teacher.locator("h1, .crumbs").first).to_be_visible()
    assert teacher.url.split("#")[0] == _feedback_url(site, learner)
    teacher.fill("#id_line", "1")
    teacher.fill("#id_body", COMMENT)
    teacher.click("#feedback-form button[type=submit]")
    expect(teacher.locator(".line-comment")).to_contain_text("Name the scale factor")
    teacher.evaluate("() => window.scrollTo(0, 0)")
    teacher.screenshot(path=str(SHOTS / "courses-feedback.png"))

    # The learner: an unread badge, the notification, and the comment in the workspace.
    student.goto(site + "/")
    expect(student.locator("#unread-count")).to_have_text("1")
    student.click("#notifications-link")
    student.locator("#notification-list a").first.click()
    expect(student.locator("#feedback")).to_contain_text("Name the scale factor")
    expect(student.locator("#feedback")).to_contain_text("on line 1")
    student.locator("#feedback").scroll_into_view_if_needed()
    student.screenshot(path=str(SHOTS / "courses-learner-feedback.png"))
    student.goto(site + "/")
    expect(student.locator("#unread-count")).to_have_count(0)
    assert not failed, failed
    if os.environ.get("COURSES_DOCS_SHOTS") == "1":
        _copy_to_docs()


def _copy_to_docs() -> None:
    """The screenshots docs/courses.md shows, as small PNGs in docs/img/."""
    from PIL import Image

    for shot in sorted(SHOTS.glob("courses-*.png")):
        with Image.open(shot) as image:
            image.convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(ROOT / "docs" / "img" / shot.name, optimize=True)


def _feedback_url(site: str, learner: Any) -> str:
    """The feedback page of the learner's late (latest) Submit."""
    from grader.models import Submission

    submission = Submission.objects.filter(user=learner, rung__slug="quantization-arithmetic", kind="submit").latest("pk")
    return f"{site}/courses/llm-spring/submissions/{submission.pk}/feedback/"
