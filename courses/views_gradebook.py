"""The gradebook pages of a course's staff: learners x assignments, one rung's learners,
one learner's attempts at a rung, and the whole gradebook as CSV.

Thin views: the role first (``get_course_for`` with ``view_gradebook``; a
learner's work also ``is_learner_of``), the assignment and the rung as the
course's own, then one service of ``courses.gradebook``, then the page.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from core.types import AuthenticatedHttpRequest, User
from exercises.models import Rung

from .gradebook import build_gradebook, learner_attempts, rung_results, stream_gradebook_csv
from .models import Assignment, Course
from .permissions import get_course_for, is_learner_of


def _assignment_rung(course: Course, assignment_id: int, rung_slug: str) -> tuple[Assignment, Rung]:
    """The course's assignment and one of its rungs; 404 for anything else (another course's assignment, a rung not in it)."""
    assignment = get_object_or_404(Assignment, pk=assignment_id, course=course)
    rung = get_object_or_404(Rung.objects.select_related("current_version"), slug=rung_slug, assignments=assignment)
    return assignment, rung


@login_required
@require_GET
def gradebook(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    course, _ = get_course_for(request.user, slug, "view_gradebook")
    book = build_gradebook(course, request.GET.get("page"))
    return render(request, "courses/gradebook.html", {"course": course, "book": book})


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
