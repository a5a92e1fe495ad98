"""The HTTP API under /api/v1/ (django-ninja): a learner's own view of the
catalog, their drafts, Runs and Submits, by personal access token.

Endpoints stay thin: what a learner may see is decided by the services the
workspace uses (frontend.services, frontend.reference, grader.services,
courses.assignments), never worked out again here. The reference comes only
through ``grader.services.can_see_reference``; hidden tests only as
``frontend.reference.unlocked_reference`` shows them after a pass.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.responses import Status
from ninja.security import HttpBearer

from core.types import User
from courses.assignments import LearnerDeadline, course_assignments_for_learner, learner_deadlines, practice_submissions
from courses.constants import CourseRole
from courses.models import Course
from exercises.models import Module, Rung, Track
from frontend import services as frontend_services
from frontend.models import Draft
from frontend.reference import may_see_reference, unlocked_reference
from frontend.views import submission_payload
from grader import messages as grader_messages
from grader import services, speed_board
from grader.constants import Kind
from grader.exceptions import GraderBusy, NothingToCancel, SubmissionInFlight, SubmissionRejected, SubmissionThrottled, TooManyJobsInFlight
from grader.models import Submission

from . import messages, schemas, tokens
from .constants import Scope
from .exceptions import ApiRefused
from .local import local_files
from .models import ApiToken


class TokenAuth(HttpBearer):
    """``Authorization: Bearer <token>``: the request's ``auth`` is the live ApiToken."""

    def __call__(self, request: HttpRequest) -> ApiToken | None:
        if not request.headers.get(self.header):
            raise ApiRefused(messages.TOKEN_MISSING, "token_missing", 401)
        return super().__call__(request)

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken:
        return tokens.authenticate_token(token.strip())


api = NinjaAPI(
    title="LLM Systems Dojo API",
    version="1",
    description="A learner's rungs, drafts, Runs and Submits by personal access token. Every refusal is `{error, code}`.",
    auth=TokenAuth(),
    urls_namespace="api-v1",
    docs_url=None,
)

ERRORS: dict[int, type[schemas.Error]] = {code: schemas.Error for code in (400, 401, 403, 404, 409, 413, 429, 503)}


def _refusal(request: HttpRequest, message: str, code: str, status: int, retry_after_s: int | None = None) -> HttpResponse:
    response = api.create_response(request, {"error": message, "code": code, "retry_after_s": retry_after_s}, status=status)
    if retry_after_s is not None:
        response["Retry-After"] = str(retry_after_s)
    return response


@api.exception_handler(ApiRefused)
def _on_refused(request: HttpRequest, exc: ApiRefused) -> HttpResponse:
    return _refusal(request, str(exc), exc.code, exc.status, exc.retry_after_s)


@api.exception_handler(AuthenticationError)
def _on_unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return _refusal(request, messages.TOKEN_MISSING, "token_missing", 401)


@api.exception_handler(ValidationError)
def _on_invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    first = exc.errors[0] if exc.errors else {}
    where = ".".join(str(part) for part in first.get("loc", ()) if part not in ("body", "payload", "query", "path"))
    detail = f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg", "invalid"))
    return _refusal(request, messages.INVALID_BODY.format(detail=detail), "invalid", 400)


@api.exception_handler(HttpError)
def _on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return _refusal(request, str(exc.message), "not_found" if exc.status_code == 404 else "invalid", exc.status_code)


REFUSAL_CODES: dict[type[SubmissionRejected], str] = {
    SubmissionInFlight: "in_flight",
    TooManyJobsInFlight: "too_many_in_flight",
    SubmissionThrottled: "rate_limited",
    GraderBusy: "busy",
    NothingToCancel: "nothing_to_cancel",
}


@api.exception_handler(SubmissionRejected)
def _on_rejected(request: HttpRequest, exc: SubmissionRejected) -> HttpResponse:
    # The web's refusals, with the web's statuses: 400/413 code, 409 in flight, 429 rate or cap, 503 queue full.
    code = getattr(exc, "reason", None) or REFUSAL_CODES.get(type(exc), "refused")
    return _refusal(request, str(exc), code, exc.http_status, exc.retry_after_s)


def _token(request: HttpRequest) -> ApiToken:
    token = request.auth  # type: ignore[attr-defined]
    assert isinstance(token, ApiToken)
    return token


def _user(request: HttpRequest) -> User:
    return _token(request).user


def _not_found() -> ApiRefused:
    return ApiRefused(messages.NOT_FOUND, "not_found", 404)


def _get_rung(slug: str) -> Rung:
    """A published rung, as the workspace finds it (frontend.views._get_rung); else 404."""
    rung = Rung.objects.select_related("current_version", "module__track").filter(slug=slug).first()
    if rung is None or rung.current_version is None:
        raise _not_found()
    return rung


def _absolute(request: HttpRequest, path: str) -> str:
    return request.build_absolute_uri(path)


def _deadline(entry: LearnerDeadline) -> dict[str, Any]:
    assignment = entry.assignment
    return {
        "course": assignment.course.slug,
        "assignment": assignment.title,
        "state": entry.state,
        "sentence": entry.sentence,
        "opens_at": entry.deadlines.opens_at,
        "due_at": entry.deadlines.due_at,
        "closes_at": entry.deadlines.closes_at,
        "extended": entry.extended,
    }


@api.get("/me", response={200: schemas.Me, **ERRORS}, summary="The token's owner, name, scope and expiry")
def me(request: HttpRequest) -> dict[str, Any]:
    token = _token(request)
    return {"username": token.user.get_username(), "token_name": token.name, "scope": token.scope, "expires_at": token.expires_at}


@api.get("/catalog", response={200: list[schemas.TrackEntry], **ERRORS}, summary="Tracks and modules, with the learner's progress")
def catalog(request: HttpRequest) -> list[dict[str, Any]]:
    user = _user(request)
    entries = []
    for track in Track.objects.prefetch_related("modules"):
        modules = list(track.modules.all())
        progress = frontend_services.module_progress(user, modules)
        entries.append(
            {
                "slug": track.slug,
                "title": track.title,
                "modules": [
                    {
                        "slug": module.slug,
                        "title": module.title,
                        "solved": progress[module.pk][0],
                        "total": progress[module.pk][1],
                        "url": _absolute(request, reverse("module", args=[module.slug])),
                    }
                    for module in modules
                ],
            }
        )
    return entries


@api.get("/modules/{slug}", response={200: schemas.ModuleDetail, **ERRORS}, summary="A module and its ladder")
def module(request: HttpRequest, slug: str) -> dict[str, Any]:
    user = _user(request)
    found = (
        Module.objects.select_related("track")
        .prefetch_related(Prefetch("rungs", queryset=Rung.objects.filter(current_version__isnull=False).select_related("current_version")))
        .filter(slug=slug)
        .first()
    )
    if found is None:
        raise _not_found()
    ladder = frontend_services.build_ladder(user, list(found.rungs.all()))
    return {
        "slug": found.slug,
        "title": found.title,
        "track": found.track.slug,
        "summary": found.summary,
        "url": _absolute(request, reverse("module", args=[found.slug])),
        "rungs": [
            {
                "slug": step.rung.slug,
                "title": step.version.title,
                "label": step.label,
                "state": step.state,
                "version": step.version.number,
                "difficulty": step.version.difficulty,
                "minutes": step.version.minutes,
            }
            for step in ladder
        ],
    }


@api.get("/rungs/{slug}", response={200: schemas.RungDetail, **ERRORS}, summary="What the workspace shows of a rung, and its local files")
def rung(request: HttpRequest, slug: str) -> dict[str, Any]:
    user = _user(request)
    found = _get_rung(slug)
    version = found.current_version
    assert version is not None
    # NOTE: the visible tests only: never version.hidden_tests, reference_code or hidden_test_meta.
    return {
        "slug": found.slug,
        "title": version.title,
        "module": found.module.slug,
        "version": version.number,
        "difficulty": version.difficulty,
        "minutes": version.minutes,
        "instructions_md": version.instructions_md,
        "starter_code": version.starter_code,
        "files": local_files(version.visible_tests),
        "solved": services.has_solved(user, found),
        "max_code_bytes": settings.GRADER_MAX_CODE_BYTES,
        "url": _absolute(request, reverse("rung", args=[found.slug])),
        "deadlines": [_deadline(entry) for entry in learner_deadlines(user, [found.pk])],
    }


@api.get("/rungs/{slug}/draft", response={200: schemas.DraftOut, **ERRORS}, summary="The learner's draft of a rung (404 when none)")
def draft_get(request: HttpRequest, slug: str) -> Draft:
    draft = Draft.objects.filter(user=_user(request), rung=_get_rung(slug)).first()
    if draft is None:
        raise ApiRefused(messages.NO_DRAFT, "no_draft", 404)
    return draft


@api.put("/rungs/{slug}/draft", response={200: schemas.Saved, **ERRORS}, summary="Save the learner's draft (run_submit scope)")
def draft_put(request: HttpRequest, slug: str, payload: schemas.DraftIn) -> dict[str, Any]:
    token = _token(request)
    tokens.require_scope(token, Scope.RUN_SUBMIT)
    found = _get_rung(slug)
    services.validate_code(payload.code)  # the web's rule for a draft: size, UTF-8, no NUL
    draft = frontend_services.save_draft(user=token.user, rung=found, code=payload.code)
    return {"saved": True, "updated_at": draft.updated_at}


def _submit(request: HttpRequest, slug: str, kind: str, payload: schemas.CodeIn) -> Status[dict[str, Any]]:
    token = _token(request)
    tokens.require_scope(token, Scope.RUN_SUBMIT)
    found = _get_rung(slug)
    version = found.current_version
    assert version is not None
    services.validate_code(payload.code)
    if not payload.code.strip():
        raise ApiRefused(grader_messages.CODE_EMPTY, "empty", 400)
    if payload.version != version.number:
        raise ApiRefused(grader_messages.VERSION_CHANGED, "version_changed", 409)
    submission = services.submit_solution(user=token.user, rung=found, kind=kind, code=payload.code, prediction=payload.prediction)
    return Status(202, {"id": submission.pk, "status": submission.status, "state_url": reverse("api-v1:job", args=[submission.pk])})


@api.post("/rungs/{slug}/run", response={202: schemas.Accepted, **ERRORS}, summary="Run the code against the visible tests (run_submit scope)")
def run(request: HttpRequest, slug: str, payload: schemas.CodeIn) -> Status[dict[str, Any]]:
    return _submit(request, slug, Kind.RUN, payload)


@api.post("/rungs/{slug}/submit", response={202: schemas.Accepted, **ERRORS}, summary="Submit the code to the hidden tests (run_submit scope)")
def submit(request: HttpRequest, slug: str, payload: schemas.CodeIn) -> Status[dict[str, Any]]:
    return _submit(request, slug, Kind.SUBMIT, payload)


@api.get("/rungs/{slug}/speed-boards", response={200: list[schemas.SpeedBoardOut], **ERRORS},
         summary="A speed rung's boards, one per machine kind: best ratios after a pass, names as chosen, else anonymous")
def speed_boards(request: HttpRequest, slug: str) -> list[dict[str, Any]]:
    found = _get_rung(slug)
    if found.current_version is None or not found.current_version.speed:
        return []
    return [
        {"machine": board.machine, "entries": board.entries, "rows": [_board_row(row) for row in board.rows],
         "own": _board_row(board.own) if board.own is not None else None}
        for board in speed_board.speed_boards(found, viewer=_user(request))
    ]  # fmt: skip


def _board_row(row: speed_board.BoardRow) -> dict[str, Any]:
    return {"rank": row.rank, "name": row.name, "ratio": row.ratio, "you": row.you}


def _own_submission(request: HttpRequest, pk: int) -> Submission:
    """The token owner's own submission; anyone else's is a 404, staff's tokens included."""
    submission = Submission.objects.defer("code").filter(pk=pk, user=_user(request)).first()
    if submission is None:
        raise ApiRefused(messages.NOT_FOUND, "not_found", 404)
    return submission


@api.get("/jobs/{job_id}", response={200: schemas.JobState, **ERRORS}, url_name="job", summary="A Run's or Submit's state and result, as the workspace shows it")
def job(request: HttpRequest, job_id: int) -> dict[str, Any]:
    state = submission_payload(_own_submission(request, job_id), _user(request))
    state.pop("cancel_url", None)  # the web's; the API's is POST /jobs/{id}/cancel
    return state


@api.post("/jobs/{job_id}/cancel", response={200: dict[str, bool], **ERRORS}, summary="Cancel a queued or running job (run_submit scope)")
def cancel(request: HttpRequest, job_id: int) -> dict[str, bool]:
    tokens.require_scope(_token(request), Scope.RUN_SUBMIT)
    services.cancel_submission(_own_submission(request, job_id))
    return {"cancelled": True}


@api.get("/rungs/{slug}/history", response={200: schemas.History, **ERRORS}, summary="The learner's attempts at a rung, newest first")
def history(request: HttpRequest, slug: str, page: int = 1) -> dict[str, Any]:
    user = _user(request)
    found = _get_rung(slug)
    page = max(1, min(page, frontend_services.HISTORY_LAST_PAGE + 1))
    shown = frontend_services.attempt_history(user, found, page=page)
    practice = practice_submissions(user, found, [attempt.submission for attempt in shown.attempts])
    return {
        "attempts": [
            {
                "id": attempt.submission.pk,
                "number": attempt.number,
                "kind": attempt.submission.kind,
                "status": attempt.submission.status,
                "outcome": attempt.submission.outcome,
                "version": attempt.submission.rung_version.number,
                "enqueued_at": attempt.submission.enqueued_at,
                "code": attempt.submission.code,
                "passed": attempt.passed,
                "total": attempt.total,
                "practice": grader_messages.PRACTICE_AFTER_CLOSE if attempt.submission.pk in practice else "",
                "speed": grader_messages.speed_note(attempt.submission.outcome, attempt.submission.timings),
            }
            for attempt in shown.attempts
        ],
        "page": page,
        "next_page": page + 1 if shown.has_more else None,
    }


@api.get("/rungs/{slug}/reference", response={200: schemas.Reference, **ERRORS}, summary="The reference solution, once the learner passed (403 before)")
def reference(request: HttpRequest, slug: str) -> dict[str, Any]:
    user = _user(request)
    found = _get_rung(slug)
    if not may_see_reference(user, found):
        raise ApiRefused(messages.REFERENCE_LOCKED, "reference_locked", 403)
    return unlocked_reference(int(user.pk), found)


@api.get("/courses", response={200: list[schemas.CourseEntry], **ERRORS}, summary="The learner's courses, assignments and deadlines")
def courses(request: HttpRequest) -> list[dict[str, Any]]:
    user = _user(request)
    entries = []
    for course in Course.objects.filter(memberships__user=user, memberships__role=CourseRole.LEARNER).distinct().order_by("title", "pk"):
        assignments = course_assignments_for_learner(course, user)
        entries.append(
            {
                "slug": course.slug,
                "title": course.title,
                "term": course.term,
                "time_zone": course.time_zone,
                "assignments": [
                    {
                        "deadline": _deadline(entry.deadline),
                        "rungs": [
                            {
                                "slug": item.rung.slug,
                                "title": item.rung.current_version.title if item.rung.current_version else item.rung.slug,
                                "solved_at": item.solved_at,
                                "standing": item.standing,
                            }
                            for item in entry.rungs
                        ],
                    }
                    for entry in assignments
                ],
            }
        )
    return entries
