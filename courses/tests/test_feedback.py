"""Feedback on a submission: staff comment on the whole of it or on a line, the learner is notified and reads it in the workspace."""

from __future__ import annotations

import pytest

from core.models import Notification
from courses.feedback import FEEDBACK_MAX_CHARS
from courses.models import Feedback

from .tools_world import HIDDEN_SOURCE_MARKER, World, attempt, build_world, client_for

pytestmark = pytest.mark.django_db

CODE = "def f():\n    return 1\n"


@pytest.fixture
def world() -> World:
    return build_world()


@pytest.fixture
def submission(world: World):
    return attempt(world.users["learner_a"], world.rungs["ta-1"], CODE, results={"test_edge": "failed", "test_big": "passed"})


def _url(submission, course: str = "course-a") -> str:
    return f"/courses/{course}/submissions/{submission.pk}/feedback/"


def test_a_teacher_leaves_a_general_and_a_line_comment_and_the_learner_is_notified_once(world, submission):
    teacher = client_for(world, "teacher_a")
    page = teacher.get(_url(submission)).content.decode()
    assert "Handles the empty batch." in page and "test_edge" in page and HIDDEN_SOURCE_MARKER not in page
    first = teacher.post(_url(submission), {"line": "", "body": "Good start, **but** see line 2."})
    assert first.status_code == 302 and first["Location"].startswith(_url(submission))
    teacher.post(_url(submission), {"line": "2", "body": "Return the batch, not 1."})
    assert [(f.line, f.body, f.author) for f in Feedback.objects.order_by("pk")] == [
        (None, "Good start, **but** see line 2.", world.users["teacher_a"]),
        (2, "Return the batch, not 1.", world.users["teacher_a"]),
    ]
    notices = list(Notification.objects.filter(user=world.users["learner_a"]))
    assert len(notices) == 1 and notices[0].kind == "feedback" and notices[0].url == f"/rungs/ta-1/#feedback-{submission.pk}"
    page = teacher.get(_url(submission)).content.decode()
    assert "<strong>but</strong>" in page and "Return the batch, not 1." in page

    workspace = client_for(world, "learner_a").get("/rungs/ta-1/").content.decode()
    assert f'id="feedback-{submission.pk}"' in workspace
    assert "<strong>but</strong>" in workspace and "Return the batch, not 1." in workspace and "on line 2" in workspace


@pytest.mark.parametrize(
    ("line", "body", "sentence"),
    [
        ("3", "Too far.", "The code has 2 lines; line 3 is not one of them."),
        ("0", "Zero.", "Ensure this value is greater than or equal to 1."),
        ("", "   ", "Write a comment first."),
        ("", "nul\x00byte", "Null characters are not allowed."),
        ("", "x" * (FEEDBACK_MAX_CHARS + 1), f"Ensure this value has at most {FEEDBACK_MAX_CHARS} characters"),
    ],
)
def test_a_bad_comment_is_refused_with_a_sentence_and_nothing_is_stored(world, submission, line, body, sentence):
    response = client_for(world, "teacher_a").post(_url(submission), {"line": line, "body": body})
    assert response.status_code == 400 and sentence in response.content.decode()
    assert not Feedback.objects.exists() and not Notification.objects.exists()


def test_comment_markdown_is_sanitised(world, submission):
    client_for(world, "teacher_a").post(_url(submission), {"body": "<script>alert(1)</script><img src=x onerror=alert(2)>"})
    for html in (client_for(world, "teacher_a").get(_url(submission)).content.decode(), client_for(world, "learner_a").get("/rungs/ta-1/").content.decode()):
        assert "<script>alert(1)" not in html and "onerror" not in html


@pytest.mark.parametrize(
    ("who", "course", "status"),
    [
        ("teacher_b", "course-a", 404),  # staff of another course
        ("teacher_b", "course-b", 404),  # ... through their own course: not their learner's submission
        ("learner_b", "course-a", 404),  # a learner of another course
        ("learner_a", "course-a", 403),  # the learner themself: the staff page is not theirs
        ("learner_a2", "course-a", 403),
        ("stranger", "course-a", 404),
    ],
)
def test_others_can_neither_read_nor_comment(world, submission, who, course, status):
    client = client_for(world, who)
    assert client.get(_url(submission, course)).status_code == status
    assert client.post(_url(submission, course), {"body": "Mine now."}).status_code == status
    assert not Feedback.objects.exists()


def test_a_ta_may_comment(world, submission):
    assert client_for(world, "ta_a").post(_url(submission), {"body": "From the TA."}).status_code == 302


def test_staff_reach_only_their_learners_submissions_on_their_rungs(world):
    teacher = client_for(world, "teacher_a")
    of_another_course = attempt(world.users["learner_b"], world.rungs["tb-1"], CODE)
    outside_the_course = attempt(world.users["learner_a"], world.rungs["ta-out"], CODE)
    of_a_staff_member = attempt(world.users["ta_a"], world.rungs["ta-1"], CODE)
    for submission in (of_another_course, outside_the_course, of_a_staff_member):
        assert teacher.get(_url(submission)).status_code == 404
        assert teacher.post(_url(submission), {"body": "x"}).status_code == 404
    assert not Feedback.objects.exists()


def test_a_learner_sees_only_feedback_on_their_own_submissions(world, submission):
    client_for(world, "teacher_a").post(_url(submission), {"body": "Only for learner_a."})
    theirs = client_for(world, "learner_a2").get("/rungs/ta-1/").content.decode()
    assert "Only for learner_a." not in theirs and 'id="feedback-' not in theirs
    assert not Notification.objects.filter(user=world.users["learner_a2"]).exists()


def test_the_service_refuses_nul_and_a_line_past_the_end_whoever_calls_it(world, submission):
    from courses.feedback import FeedbackRefused, add_feedback

    for body, line in (("a\x00b", None), ("fine", 3), ("fine", 0)):
        with pytest.raises(FeedbackRefused):
            add_feedback(course=world.course_a, submission=submission, author=world.users["teacher_a"], body=body, line=line)
    assert not Feedback.objects.exists() and not Notification.objects.exists()
