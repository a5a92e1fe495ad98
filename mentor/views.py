"""Thin views: authorise, validate, call one service, render."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET, require_POST

from core.roles import can_read_module_content
from exercises.models import Module, Rung

from . import llm, messages, services
from .exceptions import QuestionRejected
from .forms import AskForm


def _ndjson(events: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    for event in events:
        yield (json.dumps(event) + "\n").encode()


@require_POST
def ask(request: HttpRequest) -> HttpResponseBase:
    """POST module, rung?, question: JSON {answer, passages, answered_by_model},
    or with ?stream=1 and a model configured, newline-delimited JSON events."""
    if not request.user.is_authenticated:
        return JsonResponse({"error": messages.LOGIN_REQUIRED}, status=401)
    form = AskForm(request.POST)
    if not form.is_valid():
        return JsonResponse({"error": "Please check the question.", "fields": form.errors.get_json_data()}, status=400)
    module = Module.objects.filter(slug=form.cleaned_data["module"]).first()
    if module is None:
        return JsonResponse({"error": messages.UNKNOWN_MODULE}, status=404)
    rung = None
    if form.cleaned_data["rung"]:
        rung = Rung.objects.filter(slug=form.cleaned_data["rung"], module=module).first()
        if rung is None:
            return JsonResponse({"error": messages.UNKNOWN_RUNG}, status=404)
    text = form.cleaned_data["question"]
    try:
        if request.GET.get("stream") == "1" and llm.Endpoint.from_settings() is not None:
            events = services.stream_answer(user=request.user, module=module, rung=rung, text=text)
            response = StreamingHttpResponse(_ndjson(events), content_type="application/x-ndjson")
            response["Cache-Control"] = "no-cache"
            response["X-Accel-Buffering"] = "no"  # let nginx pass pieces through as they come
            return response
        answer = services.answer_question(user=request.user, module=module, rung=rung, text=text)
    except QuestionRejected as exc:
        return JsonResponse({"error": exc.message}, status=exc.status)
    return JsonResponse(answer.as_json())


@login_required
@require_GET
def module_questions(request: HttpRequest, slug: str) -> HttpResponse:
    """What learners ask about a module, most common first. For the module's content roles (editors, viewers) and admins."""
    module = get_object_or_404(Module, slug=slug)
    if not can_read_module_content(request.user, module):
        raise PermissionDenied
    rows = services.common_questions(module)
    return render(request, "mentor/questions.html", {"module": module, "rows": rows, "total": sum(row["count"] for row in rows)})
