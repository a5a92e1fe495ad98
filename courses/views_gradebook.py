"""The gradebook pages of a course's staff: learners x assignments, one rung's learners,
one learner's attempts at a rung, and the whole gradebook as CSV.

Thin views: the role first (``get_course_for`` with ``view_gradebook``; a
learner's work also ``is_learner_of``), the assignment and the rung as the
course's own, then one service of ``courses.gradebook``, then the page.
"""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET

from core.types import AuthenticatedHttpRequest, User
from exercises.models import Rung

from .deadlines import Timing
from .gradebook import AssignmentResult, Gradebook, build_gradebook, learner_attempts, rung_results, stream_gradebook_csv
from .models import Assignment, Course
from .permissions import get_course_for, is_learner_of


def _assignment_rung(course: Course, assignment_id: int, rung_slug: str) -> tuple[Assignment, Rung]:
    """The course's assignment and one of its rungs; 404 for anything else (another course's assignment, a rung not in it)."""
    assignment = get_object_or_404(Assignment, pk=assignment_id, course=course)
    rung = get_object_or_404(Rung.objects.select_related("current_version"), slug=rung_slug, assignments=assignment)
    return assignment, rung


# A page shows 50 learners x every assignment: each cell is made here in one
# f-string, as a template tag per value cost several times the whole service.
_BADGES = {
    Timing.ON_TIME: ' <span class="badge solved">on time</span>',
    Timing.LATE: ' <span class="badge attempted">late</span>',
    Timing.AFTER_CLOSE: ' <span class="badge" title="Passed after the close: practice, not counted">after close</span>',
}


@dataclass(frozen=True)
class _Row:
    learner_id: int
    username: str
    percent: int
    cells: list[SafeString]


def _cell(result: AssignmentResult, zone: zoneinfo.ZoneInfo) -> SafeString:
    solved_at, hints = result.solved_at, result.hints
    badge = _BADGES[result.timing] if result.timing else ""
    extension = f' <span class="badge" title="Extension: due {result.deadlines.due_at.astimezone(zone):%Y-%m-%d %H:%M}">ext.</span>' if result.extended else ""
    solved = f"solved {solved_at.astimezone(zone):%m-%d %H:%M} · " if solved_at else ""
    # NOTE: safe without escaping: only numbers, dates and the constants above
    # go in, never a name or a title (those stay in the template).
    return mark_safe(
        f'<td class="num"><strong>{round(result.score * 100)}%</strong>{badge}{extension}<br>'
        f'<span class="meta">{solved}{result.attempts} att. · {hints} hint{"" if hints == 1 else "s"}</span></td>'
    )


def _rows(book: Gradebook) -> list[_Row]:
    zone = zoneinfo.ZoneInfo(book.course.time_zone)
    return [_Row(row.learner_id, row.username, round(row.score * 100), [_cell(result, zone) for result in row.results]) for row in book.rows]


@login_required
@require_GET
def gradebook(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    course, _ = get_course_for(request.user, slug, "view_gradebook")
    book = build_gradebook(course, request.GET.get("page"))
    return render(request, "courses/gradebook.html", {"course": course, "book": book, "rows": _rows(book)})


@login_required
@require_GET
def gradebook_csv(request: AuthenticatedHttpRequest, slug: str) -> StreamingHttpResponse:
    course, _ = get_course_for(request.user, slug, "view_gradebook")
    response = StreamingHttpResponse(stream_gradebook_csv(course), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{course.slug}-gradebook.csv"'
    return response


@login_required
@require_GET
def gradebook_rung(request: AuthenticatedHttpRequest, slug: str, assignment_id: int, rung_slug: str) -> HttpResponse:
    course, _ = get_course_for(request.user, slug, "view_gradebook")
    assignment, rung = _assignment_rung(course, assignment_id, rung_slug)
    page, rows = rung_results(course, assignment, rung, request.GET.get("page"))
    return render(request, "courses/gradebook_rung.html", {"course": course, "assignment": assignment, "rung": rung, "page": page, "rows": rows})


@login_required
@require_GET
def gradebook_attempts(request: AuthenticatedHttpRequest, slug: str, assignment_id: int, rung_slug: str, user_id: int) -> HttpResponse:
    course, _ = get_course_for(request.user, slug, "view_gradebook")
    assignment, rung = _assignment_rung(course, assignment_id, rung_slug)
    if not is_learner_of(course, user_id):
        raise Http404("No such learner in this course.")
    learner = get_object_or_404(User, pk=user_id)
    deadlines, attempts = learner_attempts(assignment, rung, learner.pk)
    return render(request, "courses/gradebook_attempts.html", {
        "course": course, "assignment": assignment, "rung": rung, "learner": learner, "deadlines": deadlines, "attempts": attempts,
    })
