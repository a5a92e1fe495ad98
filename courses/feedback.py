"""Feedback on a submission: a course's staff comment on the whole of it or on
one of its lines, and the learner is notified.

Feedback is given in a course, on a submission of one of that course's
learners on one of its rungs (``submission_for_feedback``); a learner reads
only the feedback on their own submissions (``feedback_for_learner``).
"""

from __future__ import annotations

from collections import defaultdict

from django.db import transaction
from django.db.models import F
from django.http import Http404
from django.urls import reverse

from core.notifications import notify
from core.types import User
from exercises.models import Rung
from grader.models import Submission

from .models import Course, Feedback
from .permissions import is_learner_of
from .timeline import course_rung_ids

FEEDBACK_MAX_CHARS = 5000

# Staff-facing sentences (the form on the feedback page).
FEEDBACK_EMPTY = "Write a comment first."
FEEDBACK_TOO_LONG = "A comment is at most {limit:,} characters; this one has {size:,}."
FEEDBACK_NOT_TEXT = "A comment cannot contain NUL characters."
FEEDBACK_NO_SUCH_LINE = "The code has {count} line{plural}; line {line} is not one of them."


class FeedbackRefused(Exception):
    def __init__(self, message: str, *, field: str = "body") -> None:
        super().__init__(message)
        self.message = message
        self.field = field


def code_line_count(code: str) -> int:
    """How many lines a comment may name: an empty submission still has its one (empty) line."""
    return max(1, len(code.splitlines()))


def submission_for_feedback(course: Course, pk: int) -> Submission:
    """Submission ``pk`` if it belongs in ``course``: a learner of the course's, on one of its rungs. 404 otherwise.

    The role was checked by the caller; this is the object check: a
    course's staff never reach a submission of someone outside their
    course, nor one on a rung the course does not use.
    """
    submission = Submission.objects.select_related("rung", "rung_version", "user").filter(pk=pk).first()
    if submission is None or not is_learner_of(course, submission.user_id) or submission.rung_id not in course_rung_ids(course):
        raise Http404("No such submission in this course.")
    return submission


def clean_body(body: str) -> str:
    """The comment as stored: NUL refused, invalid Unicode replaced, surrounding blanks dropped, capped in size."""
    if "\x00" in body:
        raise FeedbackRefused(FEEDBACK_NOT_TEXT)
    text = body.encode("utf-8", "replace").decode("utf-8").strip()
    if not text:
        raise FeedbackRefused(FEEDBACK_EMPTY)
    if len(text) > FEEDBACK_MAX_CHARS:
        raise FeedbackRefused(FEEDBACK_TOO_LONG.format(limit=FEEDBACK_MAX_CHARS, size=len(text)))
    return text


def add_feedback(*, course: Course, submission: Submission, author: User, body: str, line: int | None = None) -> Feedback:
    """Leave a comment on ``submission`` (on ``line``, 1-based, or on the whole of it) and notify its learner.

    ``submission`` comes from ``submission_for_feedback`` (it is this course's).
    One unread notification per submission: more comments on it before the
    learner looks add none.
    """
    text = clean_body(body)
    if line is not None:
        count = code_line_count(submission.code)
        if not 1 <= line <= count:
            raise FeedbackRefused(FEEDBACK_NO_SUCH_LINE.format(count=count, plural="" if count == 1 else "s", line=line), field="line")
    rung = submission.rung
    title = rung.current_version.title if rung.current_version is not None else submission.rung_version.title
    with transaction.atomic():
        feedback = Feedback.objects.create(course=course, submission=submission, author=author, line=line, body=text)
        notify(
            submission.user,
            "feedback",
            {"author": author.get_username(), "submission": submission.pk, "rung": title, "course": course.title},
            reverse("rung", args=[rung.slug]) + f"#feedback-{submission.pk}",
            coalesce=True,
        )
    return feedback


def feedback_on(submission: Submission, course: Course) -> list[Feedback]:
    """The feedback ``course``'s staff left on ``submission``: general comments first, then by line."""
    return list(Feedback.objects.filter(submission=submission, course=course).select_related("author").order_by(F("line").asc(nulls_first=True), "created_at", "pk"))


def feedback_for_learner(user: User, rung: Rung) -> dict[int, list[Feedback]]:
    """Feedback on ``user``'s own submissions of ``rung``, by submission id (newest submission first). Never anyone else's."""
    by_submission: dict[int, list[Feedback]] = defaultdict(list)
    rows = (
        Feedback.objects.filter(submission__user=user, submission__rung=rung)
        .select_related("author", "course", "submission")
        .order_by("-submission_id", F("line").asc(nulls_first=True), "created_at", "pk")
    )
    for row in rows:
        by_submission[row.submission_id].append(row)
    return dict(by_submission)
