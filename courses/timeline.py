"""A learner's timeline in a course, for its staff: attempts with outcomes and
the change since the previous attempt of the same rung, hints revealed,
questions asked of the mentor, problems reported, feedback received; newest
first, a page at a time, and only on the course's rungs (what the learner
did elsewhere on the shared catalog is not this course's business).

The caller has checked the role (``get_course_for(..., "view_learner_work")``)
and that the learner is the course's (``is_learner_of``).
"""

from __future__ import annotations

import datetime as dt
import difflib
from dataclasses import dataclass, field
from enum import StrEnum
from heapq import merge
from itertools import islice

from django.db.models import F, Q, QuerySet, Window
from django.db.models.functions import Lag

from aids.models import HintReveal, ProblemReport
from core.types import User
from exercises.models import Rung
from grader.models import Submission
from grader.retention import with_test_counts
from mentor.models import Question

from .models import Course, Feedback

TIMELINE_PAGE = 50
# Older pages cost more (each source is read from its newest row), so they end here.
TIMELINE_LAST_PAGE = 20
# A diff is shown for code up to this many lines a side, and cut after this many lines of its own.
# difflib's worst case at 600 lines a side is tens of ms: a page of 50 such attempts stays under a second.
DIFF_MAX_INPUT_LINES = 600
DIFF_MAX_LINES = 300
# Questions and reports are long texts: the timeline shows their start.
EXCERPT_CHARS = 300


def course_rung_ids(course: Course) -> set[int]:
    """The rungs a course uses: its whole modules' rungs, its single rungs and its assignments' rungs."""
    return set(Rung.objects.filter(Q(module__courses=course) | Q(courses=course) | Q(assignments__course=course)).values_list("id", flat=True))


class EventKind(StrEnum):
    ATTEMPT = "attempt"
    HINT = "hint"
    QUESTION = "question"
    REPORT = "report"
    FEEDBACK = "feedback"


@dataclass(frozen=True)
class DiffLine:
    op: str  # "+", "-", "@" (a hunk header), " " (context)
    text: str


@dataclass(frozen=True)
class AttemptDiff:
    """The change from the previous attempt of the same rung to this one (None: the first attempt)."""

    previous_id: int
    lines: list[DiffLine]
    cut: int = 0  # lines left out past DIFF_MAX_LINES
    too_large: bool = False
    identical: bool = False


@dataclass
class Event:
    at: dt.datetime
    kind: EventKind
    pk: int
    rung_slug: str
    text: str = ""
    # Attempts only.
    submission: Submission | None = None
    passed: int = 0
    total: int = 0
    previous_id: int | None = None  # the learner's previous attempt of the same rung
    diff: AttemptDiff | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class TimelinePage:
    events: list[Event]
    page: int
    has_more: bool


def diff_attempts(previous: str, current: str) -> tuple[list[DiffLine], int, bool]:
    """A unified diff from ``previous`` to ``current``: (lines, lines cut, too large to compare).

    Bounded both ways: code over DIFF_MAX_INPUT_LINES lines a side is not
    compared (difflib's matcher grows with the product of the sides), and
    the diff stops after DIFF_MAX_LINES lines, saying how many it left out.
    """
    old, new = previous.splitlines(), current.splitlines()
    if len(old) > DIFF_MAX_INPUT_LINES or len(new) > DIFF_MAX_INPUT_LINES:
        return [], 0, True
    out: list[DiffLine] = []
    cut = 0
    for raw in islice(difflib.unified_diff(old, new, lineterm="", n=2), 2, None):  # the ---/+++ file header says nothing here
        if len(out) >= DIFF_MAX_LINES:
            cut += 1
            continue
        op = raw[:1] if raw[:1] in "+-@" else " "
        out.append(DiffLine(op=op, text=raw))
    return out, cut, False


def _attempts(learner: User, rung_ids: set[int]) -> QuerySet[Submission]:
    previous = Window(Lag("id"), partition_by=[F("rung_id")], order_by=[F("enqueued_at").asc(), F("id").asc()])
    # Counted from the rows, or from an old Run's compacted ones (grader.retention).
    return (
        with_test_counts(
            Submission.objects.filter(user=learner, rung_id__in=rung_ids)
            .select_related("rung", "rung_version")
            .only("id", "kind", "status", "outcome", "code", "enqueued_at", "rung__slug", "rung_version__number", "rung_version__title")
        )
        .annotate(previous_id=previous)
        .order_by("-enqueued_at", "-id")
    )


def _excerpt(text: str) -> str:
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


def learner_timeline(course: Course, learner: User, *, page: int = 1) -> TimelinePage:
    """Page ``page`` (1 = newest) of what ``learner`` did on ``course``'s rungs, newest first.

    Each source is read newest first up to the end of the page (plus one,
    to know whether there is more) and merged by time: a bounded number of
    queries, whatever the learner did.
    """
    if page < 1 or page > TIMELINE_LAST_PAGE:
        return TimelinePage(events=[], page=page, has_more=False)
    rung_ids = course_rung_ids(course)
    upto = page * TIMELINE_PAGE + 1

    attempts = list(_attempts(learner, rung_ids)[:upto])
    hints = HintReveal.objects.filter(learner=learner, rung_id__in=rung_ids).select_related("rung").order_by("-revealed_at", "-id")[:upto]
    questions = Question.objects.filter(learner=learner, rung_id__in=rung_ids).select_related("rung").order_by("-created_at", "-id")[:upto]
    reports = ProblemReport.objects.filter(learner=learner, rung_id__in=rung_ids).select_related("rung").order_by("-created_at", "-id")[:upto]
    feedback = (
        Feedback.objects.filter(course=course, submission__user=learner)
        .select_related("submission__rung", "author")
        .order_by("-created_at", "-id")[:upto]
    )
    streams: list[list[Event]] = [
        [
            Event(
                at=a.enqueued_at,
                kind=EventKind.ATTEMPT,
                pk=a.pk,
                rung_slug=a.rung.slug,
                submission=a,
                passed=int(getattr(a, "passed_count", 0)),
                total=int(getattr(a, "test_count", 0)),
                previous_id=getattr(a, "previous_id", None),
            )
            for a in attempts
        ],
        [Event(at=h.revealed_at, kind=EventKind.HINT, pk=h.pk, rung_slug=h.rung.slug, extra={"number": h.number}) for h in hints],
        [Event(at=q.created_at, kind=EventKind.QUESTION, pk=q.pk, rung_slug=q.rung.slug if q.rung else "", text=_excerpt(q.text)) for q in questions],
        [
            Event(
                at=r.created_at,
                kind=EventKind.REPORT,
                pk=r.pk,
                rung_slug=r.rung.slug,
                text=_excerpt(r.message),
                extra={"status": r.get_status_display(), "note": _excerpt(r.note)},
            )
            for r in reports
        ],
        [
            Event(
                at=f.created_at,
                kind=EventKind.FEEDBACK,
                pk=f.pk,
                rung_slug=f.submission.rung.slug,
                text=_excerpt(f.body),
                extra={"submission_id": f.submission_id, "line": f.line, "author": f.author.username if f.author else ""},
            )
            for f in feedback
        ],
    ]
    ordered = list(islice(merge(*streams, key=lambda e: (e.at, e.pk), reverse=True), upto))
    shown = ordered[(page - 1) * TIMELINE_PAGE : page * TIMELINE_PAGE]
    _attach_diffs([e for e in shown if e.kind is EventKind.ATTEMPT], {a.pk: a for a in attempts})
    return TimelinePage(events=shown, page=page, has_more=len(ordered) > page * TIMELINE_PAGE)


def _attach_diffs(events: list[Event], known: dict[int, Submission]) -> None:
    """Give each attempt the diff from the learner's previous attempt of its rung (one query for those not read yet)."""
    wanted = {e.previous_id for e in events if e.previous_id is not None}
    codes = {pk: s.code for pk, s in known.items() if pk in wanted}
    if missing := wanted - codes.keys():
        codes.update(Submission.objects.filter(pk__in=missing).values_list("id", "code"))
    for event in events:
        if event.previous_id is None or event.submission is None:
            continue
        lines, cut, too_large = diff_attempts(codes.get(event.previous_id, ""), event.submission.code)
        event.diff = AttemptDiff(previous_id=event.previous_id, lines=lines, cut=cut, too_large=too_large, identical=not lines and not too_large)
