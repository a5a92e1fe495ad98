"""A learner's timeline for their course's staff: what it shows, in what order, bounded, and to whom."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from aids.models import HintReveal, ProblemReport
from courses import timeline as timeline_module
from courses.models import Feedback
from courses.timeline import DIFF_MAX_INPUT_LINES, DIFF_MAX_LINES, EventKind, diff_attempts, learner_timeline
from grader.models import Submission
from mentor.models import Question

from .tools_world import World, attempt, build_world, client_for

pytestmark = pytest.mark.django_db

T0 = timezone.now() - dt.timedelta(days=1)
MIN = dt.timedelta(minutes=1)


@pytest.fixture
def world() -> World:
    return build_world()


def _url(world: World, learner: str = "learner_a", course: str = "course-a") -> str:
    return f"/courses/{course}/learners/{world.users[learner].pk}/timeline/"


def _busy_learner(world: World) -> None:
    """learner_a: two attempts at ta-1, a hint, a question, a report, feedback; one attempt outside the course."""
    lena, r1 = world.users["learner_a"], world.rungs["ta-1"]
    attempt(lena, r1, "def f():\n    return 0\n", kind="run", at=T0, results={"test_visible": "failed"}, hidden=False)
    second = attempt(lena, r1, "def f():\n    return 1\n", at=T0 + 2 * MIN, outcome="passed", results={"test_edge": "passed"})
    HintReveal.objects.create(learner=lena, rung=r1, number=1)
    HintReveal.objects.filter(learner=lena).update(revealed_at=T0 + MIN)
    Question.objects.create(learner=lena, module=r1.module, rung=r1, text="Why is <b>x</b> zero?", normalised_text="why")
    Question.objects.filter(learner=lena).update(created_at=T0 + 3 * MIN)
    ProblemReport.objects.create(learner=lena, rung=r1, message="Test looks wrong")
    ProblemReport.objects.filter(learner=lena).update(created_at=T0 + 4 * MIN)
    Feedback.objects.create(course=world.course_a, submission=second, author=world.users["teacher_a"], body="Nice.", created_at=T0 + 5 * MIN)
    attempt(lena, world.rungs["ta-out"], "elsewhere = 1\n", at=T0 + 6 * MIN)


def test_the_timeline_merges_every_source_newest_first_on_the_courses_rungs_only(world):
    _busy_learner(world)
    page = learner_timeline(world.course_a, world.users["learner_a"])
    assert [e.kind for e in page.events] == [
        EventKind.FEEDBACK, EventKind.REPORT, EventKind.QUESTION, EventKind.ATTEMPT, EventKind.HINT, EventKind.ATTEMPT,
    ]
    assert all(e.rung_slug == "ta-1" for e in page.events)  # the attempt at ta-out is not this course's
    newest_attempt, first_attempt = [e for e in page.events if e.kind is EventKind.ATTEMPT]
    assert first_attempt.diff is None and (first_attempt.passed, first_attempt.total) == (0, 1)
    assert newest_attempt.diff is not None and newest_attempt.diff.previous_id == first_attempt.pk
    assert [(line.op, line.text) for line in newest_attempt.diff.lines if line.op in "+-"] == [("-", "-    return 0"), ("+", "+    return 1")]
    assert not page.has_more


def test_the_teacher_sees_the_page_with_the_diff_escaped(world):
    _busy_learner(world)
    lena, r1 = world.users["learner_a"], world.rungs["ta-1"]
    attempt(lena, r1, "print('<script>alert(1)</script>')\n", at=T0 + 7 * MIN)
    response = client_for(world, "teacher_a").get(_url(world))
    html = response.content.decode()
    assert response.status_code == 200
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Why is &lt;b&gt;x&lt;/b&gt; zero?" in html and "revealed hint 1" in html and "Test looks wrong" in html
    assert "elsewhere" not in html


@pytest.mark.parametrize("who", ["teacher_a", "ta_a"])
def test_course_staff_may_open_it(world, who):
    assert client_for(world, who).get(_url(world)).status_code == 200


@pytest.mark.parametrize(
    ("who", "learner", "course", "status"),
    [
        ("teacher_b", "learner_a", "course-a", 404),  # staff of another course: course A does not exist for them
        ("learner_b", "learner_a", "course-a", 404),  # a learner of another course
        ("learner_a2", "learner_a", "course-a", 403),  # a fellow learner: a member, without the capability
        ("learner_a", "learner_a", "course-a", 403),  # the learner themself: the timeline is a staff tool
        ("teacher_a", "learner_b", "course-a", 404),  # course A's teacher, a learner of course B
        ("teacher_a", "teacher_a", "course-a", 404),  # staff are not learners of the course
        ("teacher_b", "learner_a", "course-b", 404),  # course B's teacher asking through their own course
        ("stranger", "learner_a", "course-a", 404),
    ],
)
def test_everyone_else_is_refused(world, who, learner, course, status):
    _busy_learner(world)
    response = client_for(world, who).get(_url(world, learner, course))
    assert response.status_code == status
    assert b"Test looks wrong" not in response.content


def test_an_anonymous_visitor_is_sent_to_log_in(world):
    response = Client().get(_url(world))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_diff_is_bounded_both_ways():
    huge = "x = 1\n" * (DIFF_MAX_INPUT_LINES + 1)
    assert diff_attempts("", huge) == ([], 0, True)
    lines, cut, too_large = diff_attempts("", "\n".join(f"line_{i} = {i}" for i in range(DIFF_MAX_LINES + 50)))
    assert not too_large and len(lines) == DIFF_MAX_LINES and cut == 51  # the hunk header, then every added line


def test_pages_are_bounded_and_the_queries_do_not_grow_with_the_events(world, monkeypatch):
    monkeypatch.setattr(timeline_module, "TIMELINE_PAGE", 4)
    lena, r1, r2 = world.users["learner_a"], world.rungs["ta-1"], world.rungs["ta-2"]
    for i in range(9):
        attempt(lena, r1 if i % 2 else r2, f"v = {i}\n", at=T0 + i * MIN)
    first = learner_timeline(world.course_a, lena, page=1)
    third = learner_timeline(world.course_a, lena, page=3)
    assert [e.submission.code for e in first.events if e.submission] == [f"v = {i}\n" for i in (8, 7, 6, 5)] and first.has_more
    assert [e.submission.code for e in third.events if e.submission] == ["v = 0\n"] and not third.has_more
    # Each attempt's diff is from the previous attempt of its own rung, even one past the page's end.
    code_of = {s.pk: s.code for s in Submission.objects.filter(user=lena)}
    assert [code_of[e.diff.previous_id] for e in first.events if e.diff] == [f"v = {i}\n" for i in (6, 5, 4, 3)]
    with CaptureQueriesContext(connection) as few:
        learner_timeline(world.course_a, lena, page=2)
    for i in range(9, 30):
        attempt(lena, r1, f"v = {i}\n", at=T0 + i * MIN)
    with CaptureQueriesContext(connection) as many:
        learner_timeline(world.course_a, lena, page=2)
    assert len(many.captured_queries) <= len(few.captured_queries) + 1 <= 9
    assert learner_timeline(world.course_a, lena, page=timeline_module.TIMELINE_LAST_PAGE + 1).events == []


def test_the_tools_page_lists_the_courses_learners_and_rungs_for_its_staff_only(world):
    html = client_for(world, "ta_a").get("/courses/course-a/tools/").content.decode()
    assert f"/courses/course-a/learners/{world.users['learner_a'].pk}/timeline/" in html
    assert "/courses/course-a/rungs/ta-1/mistakes/" in html and "/rungs/ta-out/" not in html and "tb-1" not in html
    assert "learner_b" not in html and "teacher_a" not in html  # only the course's learners
    assert client_for(world, "learner_a").get("/courses/course-a/tools/").status_code == 403
    assert client_for(world, "teacher_b").get("/courses/course-a/tools/").status_code == 404
