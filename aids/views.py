"""The learner's side of the aids: reveal a hint, report a problem. Thin
views: authorise, validate, call one service, answer JSON."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET, require_POST

from core.markdown import render_markdown
from core.types import AuthenticatedHttpRequest
from exercises.models import Rung

from . import messages, services
from .exceptions import AidRefused
from .forms import ReportForm, RevealHintForm
from .models import ProblemReport


def _learner_only(view: Callable[..., JsonResponse]) -> Callable[..., JsonResponse]:
    """401 in JSON for a visitor who is not logged in (these are fetched by the page's script)."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
        if not request.user.is_authenticated:
            return JsonResponse({"error": messages.LOGIN_REQUIRED}, status=401)
        return view(request, *args, **kwargs)

    return wrapper


def _get_rung(slug: str) -> Rung:
    return get_object_or_404(Rung.objects.select_related("current_version", "module"), slug=slug, current_version__isnull=False)


def _hints_payload(rung: Rung, shown: int) -> dict[str, object]:
    hints = services.rung_hints(rung)
    return {
        "total": len(hints),
        "revealed": [{"number": n, "html": str(render_markdown(text))} for n, text in enumerate(hints[:shown], start=1)],
    }


def _report_payload(report: ProblemReport) -> dict[str, object]:
    return {
        "id": report.pk,
        "status": report.status,
        "status_label": report.get_status_display(),
        "message": report.message,
        "note": report.note,
        "created_at": report.created_at.isoformat(),
    }


@require_POST
@_learner_only
def reveal_hint(request: AuthenticatedHttpRequest, slug: str) -> JsonResponse:
    """POST number: reveal that hint; JSON {total, revealed: [{number, html}]}."""
    rung = _get_rung(slug)
    form = RevealHintForm(request.POST)
    if not form.is_valid():
        return JsonResponse({"error": messages.NO_SUCH_HINT, "fields": form.errors.get_json_data()}, status=400)
    try:
        shown = services.reveal_hint(request.user, rung, form.cleaned_data["number"])
    except AidRefused as exc:
        return JsonResponse({"error": exc.message}, status=exc.status)
    return JsonResponse(_hints_payload(rung, shown))


@require_POST
@_learner_only
def file_report(request: AuthenticatedHttpRequest, slug: str) -> JsonResponse:
    """POST message, code: file a report with the current attempt attached."""
    rung = _get_rung(slug)
    # NUL is dropped here rather than refused by the form: the learner's report is kept.
    form = ReportForm({name: request.POST.get(name, "").replace("\x00", "") for name in ("message", "code")})
    if not form.is_valid():
        return JsonResponse({"error": messages.REPORT_EMPTY, "fields": form.errors.get_json_data()}, status=400)
    try:
        report = services.file_report(user=request.user, rung=rung, message=form.cleaned_data["message"], code=form.cleaned_data["code"])
    except AidRefused as exc:
        return JsonResponse({"error": exc.message}, status=exc.status)
    return JsonResponse({"message": messages.REPORT_SENT, "report": _report_payload(report)}, status=201)


@require_GET
@_learner_only
def my_reports(request: AuthenticatedHttpRequest, slug: str) -> JsonResponse:
    """The learner's own reports on the rung, with the instructors' notes."""
    rung = _get_rung(slug)
    return JsonResponse({"reports": [_report_payload(report) for report in services.learner_reports(request.user, rung)]})
