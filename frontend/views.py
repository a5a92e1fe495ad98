"""Learner pages and the small JSON API the workspace uses. Views stay thin."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordChangeForm
from django.contrib.auth.signals import user_login_failed
from django.contrib.auth.views import PasswordChangeView
from django.db.models import Count, Prefetch, Q
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core import notifications
from core.markdown import render_markdown
from core.sections import reference_anchor, split_sections
from core.types import AuthenticatedHttpRequest, User, Visitor
from courses.assignments import learner_deadlines, practice_submissions
from courses.permissions import teaches_rung
from exercises.models import Module, Rung, Track
from grader import events, messages, pacing, rejudge, services, speed_board
from grader.capacity import recent_capacity
from grader.constants import Kind, Status
from grader.exceptions import SubmissionRejected
from grader.models import Submission
from grader.results import machine_line
from grader.retention import stored_tests

from . import services as frontend_services
from . import sessions
from .forms import BoardNameForm, CodeForm, DraftForm, SignupForm
from .lockout import locked_out
from .models import Draft
from .reference import may_see_reference, unlocked_reference

log = logging.getLogger(__name__)

# A live-update stream holds a server thread: end it after this long (the
# browser's EventSource reconnects by itself) and send a comment line this
# often so proxies do not cut an idle stream.
LIVE_EVENTS_MAX_S = 60.0
LIVE_EVENTS_HEARTBEAT_S = 15.0


def _get_rung(slug: str) -> Rung:
    rung = get_object_or_404(Rung.objects.select_related("current_version", "module__track"), slug=slug)
    if rung.current_version is None:
        raise Http404("This exercise is not published.")
    return rung


def _get_submission_for_user(request: HttpRequest, pk: int | None = None, channel: str | None = None) -> Submission:
    """A learner sees only their own submissions; staff see all. Found by
    primary key or by live-update channel; anyone else's is a 404.

    Polled about once a second per waiting learner: it reads the
    submission's row without its code, and the rung only when needed."""
    lookup: dict[str, Any] = {"pk": pk} if pk is not None else {"channel": channel}
    submission = get_object_or_404(Submission.objects.defer("code"), **lookup)
    if submission.user_id != request.user.pk and not request.user.is_staff:
        raise Http404("No such submission.")
    return submission


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"ok": True})


def _modules_with_progress(user: Visitor, modules: list[Module]) -> list[dict[str, Any]]:
    progress = frontend_services.module_progress(user, modules)
    sizes = frontend_services.module_sizes(modules)
    return [{"module": module, "solved": progress[module.pk][0], "total": progress[module.pk][1], **sizes[module.pk]} for module in modules]


def catalog(request: HttpRequest) -> HttpResponse:
    tracks = list(Track.objects.prefetch_related("modules"))
    entries = [{"track": track, "modules": _modules_with_progress(request.user, list(track.modules.all()))} for track in tracks]
    return render(request, "frontend/catalog.html", {"entries": entries})


def track_detail(request: HttpRequest, slug: str) -> HttpResponse:
    track = get_object_or_404(Track, slug=slug)
    modules = _modules_with_progress(request.user, list(track.modules.all()))
    return render(request, "frontend/track.html", {"track": track, "modules": modules})


def module_detail(request: HttpRequest, slug: str) -> HttpResponse:
    module = get_object_or_404(
        Module.objects.select_related("track").prefetch_related(
            Prefetch("rungs", queryset=Rung.objects.filter(current_version__isnull=False).select_related("current_version"))
        ),
        slug=slug,
    )
    rungs = list(module.rungs.all())
    regrades = rejudge.regrades_by_rung(int(request.user.pk), [rung.pk for rung in rungs]) if request.user.is_authenticated else {}
    ladder = frontend_services.build_ladder(request.user, rungs, regrades)
    later, sources = frontend_services.module_neighbours(module)
    context = {
        "module": module,
        "ladder": ladder,
        # The learner's course deadlines for this module's rungs, in each course's time zone.
        "deadlines": learner_deadlines(request.user, [rung.pk for rung in rungs]) if isinstance(request.user, User) else [],
        "next_step": frontend_services.next_step(ladder),
        "started": any(step.state != "not started" for step in ladder),
        "total_minutes": sum(step.version.minutes for step in ladder),
        "solved_count": sum(1 for step in ladder if step.state == "solved"),
        "concept": render_markdown(module.concept_md),
        "worked_example": render_markdown(module.worked_example_md),
        "reference_blocks": [
            {"id": reference_anchor(heading) if heading else "", "heading": heading, "html": render_markdown(body)}
            for heading, body in split_sections(module.reference_md, (2,))
        ],
        "sources": sources,
        "later_modules": later,
    }
    return render(request, "frontend/module.html", context)


def _without_title(markdown_text: str, title: str) -> str:
    """Drop a leading ``# Title`` that repeats the heading the page already shows."""
    first, _, rest = markdown_text.lstrip().partition("\n")
    if first.startswith("# ") and first[2:].strip().lower() == title.strip().lower():
        return rest
    return markdown_text


@login_required
@xframe_options_sameorigin
def rung_workspace(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """The rung's workspace; ``?embed=1`` renders it without the site chrome,
    for the module page to open it in place (a same-origin frame)."""
    rung = _get_rung(slug)
    version = rung.current_version
    assert version is not None
    # NOTE: nothing here may carry the reference solution or the hidden tests'
    # text; they come from rung_reference once the learner has passed.
    solved = services.has_solved(request.user, rung)
    context = {
        "rung": rung,
        "version": version,
        "instructions": render_markdown(_without_title(version.instructions_md, version.title)),
        "code": frontend_services.opening_code(request.user, rung),
        "starter_code": version.starter_code,
        "solved": solved,
        # Course staff open the reference without solving (issue 57); the badge still says what they did.
        # (may_see_reference, with the solve already known.)
        "reference_open": solved or request.user.is_staff or teaches_rung(request.user, rung),
        "gpu_notice": services.gpu_notice(version),
        "next_rung": frontend_services.next_rung(rung),
        "deadlines": learner_deadlines(request.user, [rung.pk]),
        "max_code_bytes": settings.GRADER_MAX_CODE_BYTES,
        "embed": request.GET.get("embed") == "1",
        **_speed_context(request.user, rung, version),
    }
    return render(request, "frontend/workspace.html", context)


def _speed_context(user: User, rung: Rung, version: Any) -> dict[str, Any]:
    """A speed rung's prediction field and boards (issue 60, items 7 and 8); nothing for any other rung."""
    if not version.speed:
        return {}
    mode = speed_board.prediction_mode(version)
    return {
        "speed_boards": speed_board.speed_boards(rung, viewer=user),
        "board_name": speed_board.board_name_of(user),
        "predict": mode,
        "predict_label": messages.PREDICTION_LABEL,
        "predict_help": messages.PREDICTION_HELP.get(mode or "", ""),
        "predict_min": messages.PREDICTION_MIN,
        "predict_max": messages.PREDICTION_MAX,
    }


@login_required
@require_http_methods(["GET", "POST"])
def rung_draft(request: AuthenticatedHttpRequest, slug: str) -> JsonResponse:
    """GET: the learner's own draft (404 when none). POST: autosave it."""
    rung = _get_rung(slug)
    if request.method == "GET":
        draft = get_object_or_404(Draft, user_id=request.user.pk, rung=rung)
        return JsonResponse({"code": draft.code, "updated_at": draft.updated_at.isoformat()})
    if not _form_is_utf8(request):
        return JsonResponse({"error": messages.CODE_NOT_TEXT, "code": "not_text"}, status=400)
    form = DraftForm(request.POST)
    if not form.is_valid():
        return _refused_form(form)
    draft = frontend_services.save_draft(user=request.user, rung=rung, code=form.cleaned_data["code"])
    return JsonResponse({"saved": True, "updated_at": draft.updated_at.isoformat()})


@login_required
@require_GET
def rung_history(request: AuthenticatedHttpRequest, slug: str) -> JsonResponse:
    """The learner's own attempts at this rung, newest first, with their code
    and score, a page of ``HISTORY_PAGE`` at a time (``?page=2`` for older)."""
    rung = _get_rung(slug)
    try:
        page = max(1, int(request.GET.get("page", "1")))
    except ValueError:
        page = 1
    history = frontend_services.attempt_history(request.user, rung, page=page)
    regrades = rejudge.latest_regrades(attempt.submission.pk for attempt in history.attempts)
    # Submits after the close of every course assignment of theirs with this rung: graded, not counted.
    practice = practice_submissions(request.user, rung, [attempt.submission for attempt in history.attempts])
    attempts = [
        {
            "id": submission.pk,
            "number": attempt.number,
            "kind": submission.kind,
            "status": submission.status,
            "outcome": submission.outcome,
            "version": submission.rung_version.number,
            "enqueued_at": submission.enqueued_at.isoformat(),
            "code": submission.code,
            "passed": attempt.passed,
            "total": attempt.total,
            "regraded": _regrade_json(regrades.get(submission.pk)),
            "practice": messages.PRACTICE_AFTER_CLOSE if submission.pk in practice else "",
            "speed": messages.speed_note(submission.outcome, submission.timings),
            "state_url": reverse("submission-state", args=[submission.pk]),
            "events_url": reverse("submission-events", args=[submission.channel]),
        }
        for attempt in history.attempts
        for submission in [attempt.submission]
    ]
    return JsonResponse({"attempts": attempts, "page": page, "next_page": page + 1 if history.has_more else None})


def _regrade_json(result: Any) -> dict[str, Any] | None:
    if result is None:
        return None
    return {"version": result.new_version.number, "old_outcome": result.old_outcome, "new_outcome": result.new_outcome}


@login_required
@require_GET
def rung_reference(request: AuthenticatedHttpRequest, slug: str) -> JsonResponse:
    """The reference solution and the hidden tests' descriptions (and the
    source of those marked ``after_solve``), once passed (403 before), with
    the learner's own latest passing code beside them."""
    rung = _get_rung(slug)
    if not may_see_reference(request.user, rung):
        return JsonResponse({"error": "The reference solution unlocks once you pass the hidden tests."}, status=403)
    return JsonResponse(unlocked_reference(int(request.user.pk or 0), rung))


@login_required
@require_POST
def submission_create(request: AuthenticatedHttpRequest, slug: str, kind: str) -> JsonResponse:
    if kind not in Kind.values:
        raise Http404
    rung = _get_rung(slug)
    if not _form_is_utf8(request):
        return JsonResponse({"error": messages.CODE_NOT_TEXT, "code": "not_text"}, status=400)
    form = CodeForm(request.POST)
    if not form.is_valid():
        return _refused_form(form)
    version = rung.current_version
    assert version is not None
    if form.cleaned_data["version"] != version.number:
        return JsonResponse({"error": messages.VERSION_CHANGED, "code": "version_changed"}, status=409)
    try:
        submission = services.submit_solution(
            user=request.user, rung=rung, kind=kind, code=form.cleaned_data["code"], prediction=form.cleaned_data.get("prediction")
        )
    except SubmissionRejected as exc:
        # 400 bad input, 409 one already in flight, 429 rate limit, 503 queue full.
        refused = JsonResponse({"error": str(exc), "retry_after_s": exc.retry_after_s}, status=exc.http_status)
        if exc.retry_after_s is not None:
            refused["Retry-After"] = str(exc.retry_after_s)
        return refused
    return JsonResponse(
        {
            "id": submission.pk,
            "status": submission.status,
            "state_url": reverse("submission-state", args=[submission.pk]),
            "events_url": reverse("submission-events", args=[submission.channel]),
        },
        status=202,
    )


def _refused_form(form: CodeForm | DraftForm) -> JsonResponse:
    """The form's first error as the one sentence the page shows, with its
    code (``empty``, ``too_large``, ...): 413 for code over the limit, else 400."""
    first = next(error for errors in form.errors.as_data().values() for error in errors)
    text = " ".join(str(message) for message in first.messages)
    return JsonResponse({"error": text, "code": first.code or "invalid"}, status=413 if first.code == "too_large" else 400)


def _form_is_utf8(request: HttpRequest) -> bool:
    """Django decodes form bytes leniently (U+FFFD); code must arrive intact or not at all."""
    if request.content_type == "multipart/form-data":
        # A multipart field's invalid bytes become U+FFFD too, and no raw
        # bytes are kept to check: a replacement character may stand for
        # bytes that were not UTF-8, so such code is refused, not changed.
        # (The page sends forms urlencoded, where the bytes are checked.)
        return "\ufffd" not in request.POST.get("code", "")
    if request.content_type != "application/x-www-form-urlencoded":
        return True
    try:
        parse_qsl(request.body.decode("ascii"), keep_blank_values=True, encoding="utf-8", errors="strict")
    except (UnicodeDecodeError, ValueError):
        return False
    return True


def submission_payload(submission: Submission, user: User) -> dict[str, Any]:
    # A queued job has no test results and no regrade yet: two queries saved
    # on most polls of a busy class.
    queued = submission.status == Status.QUEUED
    tests = [
        {"name": test.name, "outcome": test.outcome, "duration_s": test.duration_s, "message": test.message, "hidden": test.hidden}
        for test in ([] if queued else stored_tests(submission))
    ]
    payload: dict[str, Any] = {
        "id": submission.pk,
        "kind": submission.kind,
        "status": submission.status,
        "outcome": submission.outcome,
        # A Submit that every test passed and the speed phase alone failed says so (issue 60).
        "summary": messages.outcome_summary(submission.outcome, submission.timings) if submission.outcome else "",
        "message": submission.message,
        "tests": tests,
        "timings": submission.timings,
        # A Submit's timings are whole seconds (grader.results): said as such, never "1.00 s".
        "timings_words": {key: messages.coarse_seconds(value) for key, value in submission.timings.items() if isinstance(value, int | float)}
        if submission.kind == Kind.SUBMIT else {},
        "peak_memory_bytes": submission.peak_memory_bytes,
        "machine": machine_line(submission.machine),
        "enqueued_at": submission.enqueued_at.isoformat(),
        "cancel_url": reverse("submission-cancel", args=[submission.pk]),
        "regraded": None if submission.status != Status.DONE else _regrade_json(rejudge.latest_regrades([submission.pk]).get(submission.pk)),
    }
    if submission.kind == Kind.RUN:
        payload["stdout"] = submission.stdout
        payload["stderr"] = submission.stderr
    jobs_ahead = None
    if submission.status == Status.QUEUED:
        ahead = Submission.objects.filter(status=Status.QUEUED, pk__lt=submission.pk).aggregate(
            same_kind=Count("pk", filter=Q(kind=submission.kind)), every_kind=Count("pk")
        )
        payload["queue_position"] = ahead["same_kind"] + 1
        jobs_ahead = ahead["every_kind"]
    if submission.status != Status.DONE:
        # When the page should ask again (it follows this when polling).
        running_for = (timezone.now() - submission.started_at).total_seconds() if submission.started_at else None
        poll_s = pacing.next_poll_s(status=submission.status, jobs_ahead=jobs_ahead, running_for_s=running_for, capacity=recent_capacity())
        payload["poll_after_ms"] = None if poll_s is None else int(poll_s * 1000)
    if submission.status == Status.DONE and submission.kind == Kind.SUBMIT:
        payload["reference_unlocked"] = may_see_reference(user, submission.rung)
    return payload


@login_required
@require_GET
def submission_state(request: AuthenticatedHttpRequest, pk: int) -> JsonResponse:
    submission = _get_submission_for_user(request, pk)
    return JsonResponse(submission_payload(submission, request.user))


@login_required
@require_POST
def submission_cancel(request: HttpRequest, pk: int) -> JsonResponse:
    """The learner stops their own queued or running job; it does not count as an attempt."""
    submission = _get_submission_for_user(request, pk)
    if submission.user_id != request.user.pk:
        raise Http404("No such submission.")
    try:
        services.cancel_submission(submission)
    except SubmissionRejected as exc:
        return JsonResponse({"error": str(exc)}, status=exc.http_status)
    return JsonResponse({"cancelled": True, "state_url": reverse("submission-state", args=[submission.pk])})


_STREAM_SLOTS = threading.BoundedSemaphore(settings.LIVE_STREAMS_PER_PROCESS)


@login_required
@require_GET
def submission_events(request: HttpRequest, channel: str) -> HttpResponse | StreamingHttpResponse:
    """Server-sent events: ``changed`` whenever the submission's rows change.

    The events carry no data; the page re-fetches ``submission_state``. The
    first event is sent once subscribed, so a change made between the page's
    POST and this subscription is not missed. The stream ends once the
    submission is done, or after ``LIVE_EVENTS_MAX_S``. With Redis down this
    answers 503 and the page polls instead.
    """
    submission = _get_submission_for_user(request, channel=channel)
    # Each open stream holds a server thread; past the cap the page polls.
    if not _STREAM_SLOTS.acquire(blocking=False):
        busy = HttpResponse("Too many live streams; poll the state URL.", status=503, content_type="text/plain")
        busy["Retry-After"] = "2"
        return busy
    pubsub = events.subscribe(submission.channel)
    if pubsub is None:
        _STREAM_SLOTS.release()
        return HttpResponse("Live updates are unavailable; poll the state URL.", status=503, content_type="text/plain")

    def finished() -> bool:
        return Submission.objects.filter(pk=submission.pk, status=Status.DONE).exists()

    def stream() -> Iterator[str]:
        # Ends soon after the submission is done, so no thread waits on a
        # stream whose page has gone; a reconnect gets one "changed" and ends.
        try:
            yield "retry: 2000\nevent: changed\ndata: {}\n\n"
            if finished():
                return
            for hint in events.listen(pubsub, max_s=LIVE_EVENTS_MAX_S, heartbeat_s=LIVE_EVENTS_HEARTBEAT_S):
                if hint is None:
                    yield ": heartbeat\n\n"
                    continue
                yield "event: changed\ndata: {}\n\n"
                if finished():
                    return
        finally:
            pubsub.close()
            _STREAM_SLOTS.release()

    response = StreamingHttpResponse(stream(), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: do not buffer the stream
    return response


def signup(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = SignupForm(request.POST)
        if form.is_valid():
            user = form.save()
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect("catalog")
    else:
        form = SignupForm()
    return render(request, "registration/signup.html", {"form": form})


class PasswordChange(PasswordChangeView):
    """Django's password change, with two additions (issue 55).

    A wrong old password counts as a failed login of this name from this
    address (django-axes), so the form is no oracle for guessing it: after
    AXES_FAILURE_LIMIT wrong ones it answers the lockout (429, Retry-After),
    as the login does. And a change ends every other session of the user;
    this one goes on under a new key."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        from axes.handlers.proxy import AxesProxyHandler

        if AxesProxyHandler.is_locked(request, self._credentials()):
            return locked_out(request)
        return super().post(request, *args, **kwargs)

    def _credentials(self) -> dict[str, str]:
        return {"username": self.request.user.get_username()}

    def form_invalid(self, form: PasswordChangeForm) -> HttpResponse:
        if form.has_error("old_password"):
            user_login_failed.send(sender=PasswordChangeForm, credentials=self._credentials(), request=self.request)
        return super().form_invalid(form)

    def form_valid(self, form: PasswordChangeForm) -> HttpResponse:
        response = super().form_valid(form)  # update_session_auth_hash: this session under a new key
        sessions.end_sessions(form.user.pk, keep=self.request.session.session_key)
        return response


password_change = PasswordChange.as_view()


@login_required
@require_GET
def notification_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The user's newest notifications, each worded and linked; those shown unread are marked read now."""
    shown = notifications.recent(request.user)
    items = [{"sentence": messages.notification_sentence(n.kind, n.params), "url": n.url, "created_at": n.created_at, "unread": n.read_at is None} for n in shown]
    notifications.mark_read(request.user, [n.pk for n in shown if n.read_at is None])
    return render(request, "frontend/notifications.html", {"items": items})


@login_required
@require_http_methods(["GET", "POST"])
def board_name(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The learner's name on speed boards: anonymous until they tick the box and choose one."""
    current = speed_board.board_name_of(request.user)
    saved = ""
    if request.method == "POST":
        form = BoardNameForm(request.POST, user=request.user)
        if form.is_valid():
            speed_board.set_board_name(request.user, form.cleaned_data["name"])
            current = form.cleaned_data["name"]
            saved = messages.BOARD_NAME_SAVED_SHOWN.format(name=current) if current else messages.BOARD_NAME_SAVED_HIDDEN
            form = BoardNameForm(initial={"shown": bool(current), "name": current}, user=request.user)
    else:
        form = BoardNameForm(initial={"shown": bool(current), "name": current}, user=request.user)
    status = 400 if request.method == "POST" and not saved else 200
    return render(request, "frontend/board_name.html", {"form": form, "saved": saved, "current": current}, status=status)
