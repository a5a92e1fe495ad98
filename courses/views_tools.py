"""The course staff's tools on their learners' work: a learner's timeline,
feedback on a submission, common mistakes per rung. Thin views: the role
(``get_course_for``) and the object (``is_learner_of``, the course's rungs)
are checked first, then one service, then the page.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_http_methods

from core.markdown import render_markdown
from core.types import AuthenticatedHttpRequest, User
from exercises.models import Rung
from grader import speed_board
from grader.constants import Kind
from grader.retention import stored_tests

from . import feedback as feedback_service
from .constants import CourseRole
from .mistakes import common_mistakes
from .models import Membership
from .permissions import get_course_for, is_learner_of, may
from .timeline import TIMELINE_LAST_PAGE, course_rung_ids, learner_timeline


@dataclass(frozen=True)
class Comment:
    pk: int
    author: str
    created_at: dt.datetime
    line: int | None
    html: SafeString


class FeedbackForm(forms.Form):
    line = forms.IntegerField(required=False, min_value=1, help_text="Empty: a comment on the whole submission.")
    body = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), max_length=feedback_service.FEEDBACK_MAX_CHARS, strip=False)


def _page(request: AuthenticatedHttpRequest) -> int:
    try:
        return max(1, int(request.GET.get("page", "1")))
    except ValueError:
        return 1


@login_required
@require_GET
def tools(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """The staff's way in: each learner of the course (to their timeline) and each rung (to its common mistakes)."""
    course, _ = get_course_for(request.user, slug, "view_learner_work")
    learners = Membership.objects.filter(course=course, role=CourseRole.LEARNER).select_related("user").order_by("user__username")
    rungs = Rung.objects.filter(pk__in=course_rung_ids(course)).select_related("current_version", "module").order_by("module__order", "module__slug", "senior", "order", "slug")
    return render(request, "courses/timeline_index.html", {"course": course, "learners": learners, "rungs": rungs})


@login_required
@require_GET
def timeline(request: AuthenticatedHttpRequest, slug: str, user_id: int) -> HttpResponse:
    """A learner's attempts, hints, questions, reports and feedback in this course, newest first."""
    course, _ = get_course_for(request.user, slug, "view_learner_work")
    if not is_learner_of(course, user_id):
        raise Http404("No such learner in this course.")
    learner = get_object_or_404(User, pk=user_id)
    page = _page(request)
    result = learner_timeline(course, learner, page=page)
    return render(
        request,
        "courses/timeline.html",
        {"course": course, "learner": learner, "timeline": result, "last_page": page >= TIMELINE_LAST_PAGE},
    )


@login_required
@require_http_methods(["GET", "POST"])
def submission_feedback(request: AuthenticatedHttpRequest, slug: str, pk: int) -> HttpResponse:
    """A learner's submission with its code and results, its feedback, and the forms to add some (POST)."""
    course, _ = get_course_for(request.user, slug, "view_learner_work")
    submission = feedback_service.submission_for_feedback(course, pk)
    can_comment = may(request.user, course, "give_feedback")
    form = FeedbackForm(request.POST or None)
    if request.method == "POST":
        if not can_comment:
            raise Http404("No such page.")
        if form.is_valid():
            try:
                added = feedback_service.add_feedback(
                    course=course, submission=submission, author=request.user, body=form.cleaned_data["body"], line=form.cleaned_data["line"]
                )
            except feedback_service.FeedbackRefused as exc:
                form.add_error(exc.field, exc.message)
            else:
                return redirect(reverse("courses:feedback", args=[course.slug, submission.pk]) + f"#comment-{added.pk}")
    comments = [
        Comment(pk=c.pk, author=c.author.get_username() if c.author else "", created_at=c.created_at, line=c.line, html=render_markdown(c.body))
        for c in feedback_service.feedback_on(submission, course)
    ]
    by_line: dict[int, list[Comment]] = {}
    for comment in comments:
        if comment.line is not None:
            by_line.setdefault(comment.line, []).append(comment)
    lines = [{"number": n, "text": text, "comments": by_line.get(n, [])} for n, text in enumerate(submission.code.splitlines() or [""], start=1)]
    context = {
        "course": course,
        "submission": submission,
        "lines": lines,
        "general": [c for c in comments if c.line is None],
        "tests": stored_tests(submission),
        "show_output": submission.kind == Kind.RUN,
        "form": form if can_comment else None,
        "line_count": len(lines),
    }
    return render(request, "courses/feedback.html", context, status=400 if request.method == "POST" else 200)


@login_required
@require_GET
def mistakes(request: AuthenticatedHttpRequest, slug: str, rung_slug: str) -> HttpResponse:
    """The hidden tests this course's learners fail most on a rung, with example attempts."""
    course, _ = get_course_for(request.user, slug, "view_learner_work")
    rung = Rung.objects.select_related("current_version").filter(slug=rung_slug).first()
    if rung is None or rung.pk not in course_rung_ids(course):
        raise Http404("No such rung in this course.")
    return render(request, "courses/mistakes.html", {"course": course, "rung": rung, "result": common_mistakes(course, rung.pk)})


@login_required
@require_GET
def speed_boards(request: AuthenticatedHttpRequest, slug: str, rung_slug: str) -> HttpResponse:
    """A speed rung's boards for this course's learners only, with their usernames (its staff see their work anyway)."""
    course, _ = get_course_for(request.user, slug, "view_learner_work")
    rung = Rung.objects.select_related("current_version").filter(slug=rung_slug).first()
    if rung is None or rung.pk not in course_rung_ids(course):
        raise Http404("No such rung in this course.")
    learners = Membership.objects.filter(course=course, role=CourseRole.LEARNER).values("user")
    timed = rung.current_version is not None and bool(rung.current_version.speed)
    boards = speed_board.speed_boards(rung, learners=learners, names="roster", size=speed_board.COURSE_BOARD_ROWS) if timed else []
    return render(request, "courses/speed_boards.html", {"course": course, "rung": rung, "boards": boards, "timed": timed})
