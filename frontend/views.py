"""Learner pages and the small JSON API the workspace uses. Views stay thin."""

from __future__ import annotations

import platform
from typing import Any

from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from exercises.models import Module, Rung, Track
from grader import services
from grader.constants import Kind, Outcome, Status
from grader.exceptions import SubmissionRejected
from grader.messages import OUTCOME_SUMMARY
from grader.models import Progress, Submission

from .forms import CodeForm, SignupForm
from .markdown import render_markdown


def _get_rung(slug: str) -> Rung:
    rung = get_object_or_404(Rung.objects.select_related("current_version", "module__track"), slug=slug)
    if rung.current_version is None:
        raise Http404("This exercise is not published.")
    return rung


def _get_submission_for_user(request: HttpRequest, pk: int) -> Submission:
    """A learner sees only their own submissions; staff see all."""
    submission = get_object_or_404(Submission.objects.select_related("rung_version__rung"), pk=pk)
    if submission.user_id != request.user.pk and not request.user.is_staff:
        raise Http404("No such submission.")
    return submission


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"ok": True, "platform": platform.system()})


def catalog(request: HttpRequest) -> HttpResponse:
    tracks = Track.objects.prefetch_related("modules")
    return render(request, "frontend/catalog.html", {"tracks": tracks})


def track_detail(request: HttpRequest, slug: str) -> HttpResponse:
    track = get_object_or_404(Track, slug=slug)
    modules = track.modules.prefetch_related("rungs")
    return render(request, "frontend/track.html", {"track": track, "modules": modules})


def _rung_states(user: Any, rungs: list[Rung]) -> dict[int, str]:
    if not user.is_authenticated:
        return {}
    states = {}
    for progress in Progress.objects.filter(user=user, rung__in=rungs):
        states[progress.rung_id] = "solved" if progress.solved_at else "attempted"
    attempted = Submission.objects.filter(user=user, rung_version__rung__in=rungs).values_list("rung_version__rung_id", flat=True).distinct()
    for rung_id in attempted:
        states.setdefault(rung_id, "attempted")
    return states


def module_detail(request: HttpRequest, slug: str) -> HttpResponse:
    module = get_object_or_404(
        Module.objects.select_related("track").prefetch_related(
            Prefetch("rungs", queryset=Rung.objects.filter(current_version__isnull=False).select_related("current_version"))
        ),
        slug=slug,
    )
    rungs = list(module.rungs.all())
    states = _rung_states(request.user, rungs)
    ladder = [{"rung": rung, "version": rung.current_version, "state": states.get(rung.pk, "not started")} for rung in rungs]
    context = {
        "module": module,
        "ladder": ladder,
        "total_minutes": sum(rung.current_version.minutes for rung in rungs if rung.current_version),
        "concept": render_markdown(module.concept_md),
        "worked_example": render_markdown(module.worked_example_md),
        "reference": render_markdown(module.reference_md),
        "next_module": Module.objects.filter(slug=module.next_module_slug).first() if module.next_module_slug else None,
    }
    return render(request, "frontend/module.html", context)


@login_required
def rung_workspace(request: HttpRequest, slug: str) -> HttpResponse:
    rung = _get_rung(slug)
    version = rung.current_version
    assert version is not None
    last = Submission.objects.filter(user_id=int(request.user.pk or 0), rung_version__rung=rung).only("code").first()
    context = {
        "rung": rung,
        "version": version,
        "instructions": render_markdown(version.instructions_md),
        "code": last.code if last else version.starter_code,
        "solved": services.has_solved(request.user, rung),
    }
    return render(request, "frontend/workspace.html", context)


@login_required
@require_GET
def rung_reference(request: HttpRequest, slug: str) -> JsonResponse:
    rung = _get_rung(slug)
    if not services.can_see_reference(request.user, rung):
        return JsonResponse({"error": "The reference solution unlocks once you pass the hidden tests."}, status=403)
    version = rung.current_version
    assert version is not None
    return JsonResponse(
        {
            "reference": version.reference_code,
            "hidden_tests": [{"name": name, "description": meta.get("description", "")} for name, meta in version.hidden_test_meta.items()],
        }
    )


@login_required
@require_POST
def submission_create(request: HttpRequest, slug: str, kind: str) -> JsonResponse:
    if kind not in Kind.values:
        raise Http404
    rung = _get_rung(slug)
    form = CodeForm(request.POST)
    if not form.is_valid():
        return JsonResponse({"error": "Invalid request.", "fields": form.errors.get_json_data()}, status=400)
    version = rung.current_version
    assert version is not None
    if form.cleaned_data["version"] != version.number:
        return JsonResponse({"error": "This exercise was updated since you opened it. Reload the page to get the new version."}, status=409)
    try:
        submission = services.submit_solution(user=request.user, rung=rung, kind=kind, code=form.cleaned_data["code"])
    except SubmissionRejected as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse({"id": submission.pk, "status": submission.status, "state_url": f"/submissions/{submission.pk}/state"}, status=202)


def submission_payload(submission: Submission, user: Any) -> dict[str, Any]:
    tests = [
        {"name": test.name, "outcome": test.outcome, "duration_s": test.duration_s, "message": test.message, "hidden": test.hidden}
        for test in submission.test_results.all()
    ]
    payload: dict[str, Any] = {
        "id": submission.pk,
        "kind": submission.kind,
        "status": submission.status,
        "outcome": submission.outcome,
        "summary": OUTCOME_SUMMARY[Outcome(submission.outcome)] if submission.outcome else "",
        "message": submission.message,
        "tests": tests,
        "timings": submission.timings,
        "peak_memory_bytes": submission.peak_memory_bytes,
    }
    if submission.kind == Kind.RUN:
        payload["stdout"] = submission.stdout
        payload["stderr"] = submission.stderr
    if submission.status == Status.QUEUED:
        payload["queue_position"] = Submission.objects.filter(status=Status.QUEUED, kind=submission.kind, pk__lt=submission.pk).count() + 1
    if submission.status == Status.DONE and submission.kind == Kind.SUBMIT:
        payload["reference_unlocked"] = services.can_see_reference(user, submission.rung_version.rung)
    return payload


@login_required
@require_GET
def submission_state(request: HttpRequest, pk: int) -> JsonResponse:
    submission = _get_submission_for_user(request, pk)
    return JsonResponse(submission_payload(submission, request.user))


def signup(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = SignupForm(request.POST)
        if form.is_valid():
            user = form.save()
            login(request, user)
            return redirect("catalog")
    else:
        form = SignupForm()
    return render(request, "registration/signup.html", {"form": form})
