"""Similarity reports of an assignment's rungs, for the course's staff only.

Thin views: the role (``get_course_for(..., "view_reports")``) and the
object (the assignment is the course's, the rung the assignment's, the
report the assignment's) are checked first, then one service, then the
page. The code shown is the course's learners' only (``similarity.shown_pairs``)
and is escaped like any other text: it is hostile.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from core.types import AuthenticatedHttpRequest
from exercises.models import Rung

from . import similarity
from .constants import ReportState
from .models import Assignment, AssignmentRung, Course, SimilarityReport
from .permissions import get_course_for


class RungChoiceField(forms.ModelChoiceField[Rung]):
    def label_from_instance(self, obj: Rung) -> str:
        return obj.current_version.title if obj.current_version else obj.slug


class SimilarityRequestForm(forms.Form):
    rung = RungChoiceField(queryset=Rung.objects.none(), empty_label=None)
    threshold = forms.FloatField(
        min_value=0.1, max_value=1.0, initial=similarity.THRESHOLD_DEFAULT,
        help_text="Pairs whose larger share of code found in the other reaches this (0.1 to 1) are listed.",
    )

    def __init__(self, *args: Any, assignment: Assignment, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["rung"]
        assert isinstance(field, RungChoiceField)
        field.queryset = Rung.objects.filter(pk__in=AssignmentRung.objects.filter(assignment=assignment).values("rung_id")).select_related("current_version")


def _assignment_of(course: Course, assignment_id: int) -> Assignment:
    return get_object_or_404(Assignment, pk=assignment_id, course=course)


def _report_of(course: Course, report_id: int) -> SimilarityReport:
    return get_object_or_404(SimilarityReport.objects.select_related("assignment", "rung__current_version"), pk=report_id, assignment__course=course)


@login_required
@require_http_methods(["GET", "POST"])
def similarity_reports(request: AuthenticatedHttpRequest, slug: str, assignment_id: int) -> HttpResponse:
    """The assignment's similarity reports, newest first, and the form to request one (POST)."""
    course, _ = get_course_for(request.user, slug, "view_reports")
    assignment = _assignment_of(course, assignment_id)
    form = SimilarityRequestForm(request.POST or None, assignment=assignment)
    if request.method == "POST" and form.is_valid():
        try:
            report = similarity.request_similarity_report(assignment, form.cleaned_data["rung"], request.user, form.cleaned_data["threshold"])
        except similarity.SimilarityRefused as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("courses:similarity-report", course.slug, report.pk)
    reports = list(assignment.similarity_reports.select_related("rung__current_version", "created_by")[:50])
    return render(
        request,
        "courses/similarity_reports.html",
        {"course": course, "assignment": assignment, "form": form, "reports": [(report, similarity.is_stale(report)) for report in reports]},
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_GET
def similarity_report(request: AuthenticatedHttpRequest, slug: str, report_id: int) -> HttpResponse:
    """One report: its state, then its pairs of learners, most alike first."""
    course, _ = get_course_for(request.user, slug, "view_reports")
    report = _report_of(course, report_id)
    stale = similarity.is_stale(report)
    done = report.state == ReportState.DONE
    return render(
        request,
        "courses/similarity_report.html",
        {
            "course": course,
            "report": report,
            "stale": stale,
            "stale_sentence": similarity.FAILED_STALE,
            "in_flight": report.state in (ReportState.QUEUED, ReportState.RUNNING) and not stale,
            "pairs": similarity.shown_pairs(report) if done else [],
            "capped_learners": done and report.compared >= similarity.SIMILARITY_MAX_LEARNERS,
            "capped_pairs": done and len(report.pairs or []) >= similarity.SIMILARITY_MAX_PAIRS,
            "max_learners": similarity.SIMILARITY_MAX_LEARNERS,
            "max_pairs": similarity.SIMILARITY_MAX_PAIRS,
            "max_chars": similarity.SIMILARITY_MAX_CODE_CHARS,
        },
    )


@login_required
@require_GET
def similarity_pair(request: AuthenticatedHttpRequest, slug: str, report_id: int, number: int) -> HttpResponse:
    """Two learners' code side by side, what matched marked."""
    course, _ = get_course_for(request.user, slug, "view_reports")
    report = _report_of(course, report_id)
    sides = similarity.pair_sides(report, number) if report.state == ReportState.DONE else None
    if sides is None:
        raise Http404("No such pair in this report.")
    row, a, b = sides
    return render(request, "courses/similarity_pair.html", {"course": course, "report": report, "row": row, "sides": [a, b]})
