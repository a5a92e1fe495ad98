"""Authoring pages: a module's editors change it, its viewers read it; admins everything.

Every view authorises first, on the object, through one helper
(``_get_module``/``_get_draft`` with the capability of authoring.content_roles
it needs, ``_require`` or ``_require_admin``), then validates a form, calls
one service and renders. A viewer's GET of an editor page is read-only; any
change they POST is refused (403).
"""

from __future__ import annotations

import csv
import functools
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import IntegrityError, transaction
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from aids import services as aids_services
from aids.constants import ReportStatus
from aids.exceptions import AidRefused
from aids.forms import ResolveReportForm
from aids.models import ProblemReport
from core.constants import MARKDOWN_MAX_CHARS
from core.csv_cells import csv_safe
from core.markdown import render_markdown
from core.roles import is_admin
from core.types import AuthenticatedHttpRequest, User
from exercises.models import Module, Rung
from grader import rejudge, speed_board
from grader.constants import Status
from grader.models import Rejudge

from . import content_roles, operations, services, stats, transfer
from . import messages as instructor_messages
from .content_roles import (
    RoleRefused,
    may_create_module,
    may_edit_content,
    may_export,
    may_grant,
    may_import,
    may_open_authoring,
    may_publish,
    may_read_content,
    may_resolve_reports,
)
from .exceptions import AuthoringError, CheckRefused, ImportRefused, PublishRefused
from .forms import (
    AlternativeFormSet,
    HiddenTestFormSet,
    ImportForm,
    ModuleForm,
    ModuleRoleForm,
    NewRungForm,
    RejudgeApplyForm,
    RungDraftForm,
    WrongSolutionFormSet,
    hidden_initial,
    hidden_meta_from,
    wrong_from,
    wrong_initial,
)
from .models import RungCheck, RungDraft


class _LoginRequired(Exception):
    pass


def _require_login(request: HttpRequest) -> None:
    if not request.user.is_authenticated:
        raise _LoginRequired


def _require(request: HttpRequest, may: Callable[[User | AnonymousUser], bool]) -> None:
    _require_login(request)
    if not may(request.user):
        raise PermissionDenied("Only instructors and holders of a content role author modules.")


def _require_admin(request: HttpRequest) -> None:
    _require_login(request)
    if not is_admin(request.user):
        raise PermissionDenied("Only admins see this page.")


ModuleCapability = Callable[[User | AnonymousUser, Module], bool]


def _get_module(request: HttpRequest, slug: str, may: ModuleCapability) -> Module:
    """The module ``slug`` if the user holds the capability ``may`` on it (authoring.content_roles). 403 for anyone else."""
    _require_login(request)
    module = get_object_or_404(Module.objects.select_related("track"), slug=slug)
    if not may(request.user, module):
        raise PermissionDenied("Your content role on this module does not allow this." if may_read_content(request.user, module)
                               else "You hold no content role on this module.")
    return module


def _get_draft(request: HttpRequest, slug: str, rung_slug: str, may: ModuleCapability) -> tuple[Module, RungDraft]:
    module = _get_module(request, slug, may)
    draft = services.get_draft(module, rung_slug)
    if draft is None:
        raise Http404("No such rung in this module.")
    return module, draft


def _reading_or_editing(request: HttpRequest) -> ModuleCapability:
    """A GET reads (viewers too); anything else changes (editors)."""
    return may_read_content if request.method in ("GET", "HEAD") else may_edit_content


def _guarded(view: Any) -> Any:
    """Anonymous users go to the login page; everything else the helpers decide."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            response: HttpResponse = view(request, *args, **kwargs)
        except _LoginRequired:
            if request.headers.get("Accept", "").startswith("application/json") or request.method != "GET":
                return JsonResponse({"error": "log in first"}, status=401)
            return redirect_to_login(request.get_full_path())
        return response

    return wrapper


# --- Modules ------------------------------------------------------------------


@_guarded
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    _require(request, may_open_authoring)
    modules = list(content_roles.modules_for(request.user).prefetch_related("rungs", "drafts"))
    return render(request, "authoring/home.html", {"modules": modules, "import_form": ImportForm(), "is_admin": is_admin(request.user),
                                                   "may_create": may_create_module(request.user), "may_import": may_import(request.user)})


@_guarded
@require_http_methods(["GET", "POST"])
def module_create(request: HttpRequest) -> HttpResponse:
    _require(request, may_create_module)
    form = ModuleForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():
                module = form.save()
                content_roles.make_creator_editor(module, request.user)  # type: ignore[arg-type]  # logged in: _require
        except IntegrityError:  # another module took the slug or the id since the form was checked
            form.add_error(None, instructor_messages.MODULE_TAKEN_MEANWHILE)
        else:
            messages.success(request, f"Module “{module.title}” created. Add its first rung.")
            return redirect("authoring:module", slug=module.slug)
    return render(request, "authoring/module_form.html", {"form": form, "module": None})


@_guarded
@require_http_methods(["GET", "POST"])
def module_edit(request: HttpRequest, slug: str) -> HttpResponse:
    module = _get_module(request, slug, _reading_or_editing(request))
    form = ModuleForm(request.POST or None, instance=module)
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():
                form.save()
        except IntegrityError:  # another module took the id since the form was checked
            form.add_error(None, instructor_messages.MODULE_TAKEN_MEANWHILE)
        else:
            messages.success(request, "Module saved.")
            return redirect("authoring:module", slug=module.slug)
    rungs = list(Rung.objects.filter(module=module).select_related("current_version").order_by("order", "slug"))
    drafts = {draft.slug: draft for draft in RungDraft.objects.filter(module=module)}
    ladder = [{"slug": rung.slug, "order": rung.order, "version": rung.current_version, "draft": drafts.pop(rung.slug, None)} for rung in rungs]
    ladder += [{"slug": draft.slug, "order": draft.order, "version": None, "draft": draft} for draft in drafts.values()]
    ladder.sort(key=lambda row: (row["order"], row["slug"]))
    return render(request, "authoring/module_form.html", {
        "form": form, "module": module, "ladder": ladder, "new_rung_form": NewRungForm(prefix="rung"),
        "roles": content_roles.roles_of(module), "can_edit": may_edit_content(request.user, module),
    })


@_guarded
@require_POST
def rung_create(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    module = _get_module(request, slug, may_edit_content)
    form = NewRungForm(request.POST, prefix="rung")
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, str(error))
        return redirect("authoring:module", slug=module.slug)
    try:
        draft = services.create_draft(module=module, slug=form.cleaned_data["slug"], title=form.cleaned_data["title"], user=request.user)
    except AuthoringError as exc:
        messages.error(request, str(exc))
        return redirect("authoring:module", slug=module.slug)
    return redirect("authoring:rung", slug=module.slug, rung=draft.slug)


@_guarded
@require_GET
def module_export(request: HttpRequest, slug: str) -> HttpResponse:
    module = _get_module(request, slug, may_export)
    data = transfer.zip_files(transfer.export_module(module))
    response = HttpResponse(data, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{module.slug}.zip"'
    return response


@_guarded
@require_POST
def catalog_import(request: AuthenticatedHttpRequest) -> HttpResponse:
    _require(request, may_import)
    form = ImportForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Choose a zip file to import.")
        return redirect("authoring:home")
    upload = form.cleaned_data["archive"]
    if upload.size > transfer.MAX_IMPORT_BYTES:
        messages.error(request, "The zip is too large.")
        return redirect("authoring:home")
    try:
        report = transfer.import_files(transfer.unzip_files(upload.read()), request.user)
    except ImportRefused as exc:
        messages.error(request, f"Import refused: {exc}")
        return redirect("authoring:home")
    changed = ", ".join(report.new_versions) or "none"
    if report.drafts:
        messages.success(request, f"Imported {report.modules} module(s), {report.rungs} rung(s) as drafts; nothing is published until "
                                  f"each passes its Check and you publish it: {', '.join(report.drafts)}.")
    else:
        messages.success(request, f"Imported {report.modules} module(s), {report.rungs} rung(s); new versions: {changed}.")
    return redirect("authoring:home")


@_guarded
@require_GET
def module_progress_csv(request: HttpRequest, slug: str) -> HttpResponse:
    module = _get_module(request, slug, may_read_content)
    header, rows = stats.best_outcomes(module)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{module.slug}-progress.csv"'
    writer = csv.writer(response)
    writer.writerow(header)
    # NOTE: a username may start with = + - or @; spreadsheets would run it as a formula.
    writer.writerows([csv_safe(row[0]), *row[1:]] for row in rows)
    return response


# --- Rung drafts ----------------------------------------------------------------


def _editor_context(request: HttpRequest, module: Module, draft: RungDraft, form: RungDraftForm, hidden: Any, wrong: Any,
                    alternatives: Any) -> dict[str, Any]:
    return {"module": module, "draft": draft, "form": form, "hidden_formset": hidden, "wrong_formset": wrong, "alternative_formset": alternatives,
            "state": services.draft_state(draft), "can_edit": may_edit_content(request.user, module),
            "can_publish": may_publish(request.user, module),
            "preview": render_markdown(draft.instructions_md)}


@_guarded
@require_http_methods(["GET", "POST"])
def rung_edit(request: AuthenticatedHttpRequest, slug: str, rung: str) -> HttpResponse:
    module, draft = _get_draft(request, slug, rung, _reading_or_editing(request))
    if request.method == "POST":
        form = RungDraftForm(request.POST, instance=draft)
        hidden = HiddenTestFormSet(request.POST, prefix="hidden")
        wrong = WrongSolutionFormSet(request.POST, prefix="wrong")
        # A form without the alternatives' rows (a script, an old page) keeps the draft's alternatives.
        alternatives = AlternativeFormSet(request.POST if "alt-TOTAL_FORMS" in request.POST else None, prefix="alt",
                                          initial=wrong_initial(draft, "alternatives"))
        if form.is_valid() and hidden.is_valid() and wrong.is_valid() and (not alternatives.is_bound or alternatives.is_valid()):
            draft = form.save(commit=False)
            draft.hidden_test_meta = hidden_meta_from(hidden)
            draft.wrong_solutions = wrong_from(wrong)
            if alternatives.is_bound:
                draft.alternatives = wrong_from(alternatives)
            draft.updated_by_id = request.user.pk
            draft.save()
            action = request.POST.get("action", "save")
            if action == "check":
                return _check(request, module, draft, saved=True)
            messages.success(request, "Draft saved.")
            return redirect("authoring:rung", slug=module.slug, rung=draft.slug)
    else:
        form = RungDraftForm(instance=draft)
        hidden = HiddenTestFormSet(initial=hidden_initial(draft), prefix="hidden")
        wrong = WrongSolutionFormSet(initial=wrong_initial(draft), prefix="wrong")
        alternatives = AlternativeFormSet(initial=wrong_initial(draft, "alternatives"), prefix="alt")
    return render(request, "authoring/rung_form.html", _editor_context(request, module, draft, form, hidden, wrong, alternatives))


@_guarded
@require_POST
def rung_check(request: AuthenticatedHttpRequest, slug: str, rung: str) -> HttpResponse:
    module, draft = _get_draft(request, slug, rung, may_edit_content)
    if draft.pk is None:
        draft.updated_by_id = request.user.pk
        draft.save()
    return _check(request, module, draft, saved=False)


def _check(request: AuthenticatedHttpRequest, module: Module, draft: RungDraft, *, saved: bool) -> HttpResponse:
    """Ask for a Check and go back to the editor, saying what became of it; a refusal carries a Retry-After."""
    response = redirect("authoring:rung", slug=module.slug, rung=draft.slug)
    try:
        check = services.request_check(draft, request.user)
    except CheckRefused as exc:
        messages.error(request, str(exc))
        response["Retry-After"] = str(exc.retry_after_s)
    except AuthoringError as exc:
        messages.error(request, str(exc))
    else:
        if check.status == Status.DONE:
            messages.info(request, instructor_messages.CHECK_REUSED)
        else:
            messages.info(request, instructor_messages.CHECK_SAVED_AND_QUEUED if saved else instructor_messages.CHECK_QUEUED)
    return response


@_guarded
@require_GET
def check_state(request: HttpRequest, slug: str, rung: str, pk: int) -> JsonResponse:
    """The JSON state of one Check (the editor polls it while the Check runs)."""
    _module, draft = _get_draft(request, slug, rung, may_read_content)
    check = get_object_or_404(RungCheck, pk=pk, draft__pk=draft.pk)
    return JsonResponse({"status": check.status, "ok": check.ok, "facts": check.facts, "error": check.error, "seconds": check.seconds})


@_guarded
@require_POST
def rung_publish(request: AuthenticatedHttpRequest, slug: str, rung: str) -> HttpResponse:
    module, draft = _get_draft(request, slug, rung, may_publish)
    if draft.pk is None:
        messages.error(request, "Nothing to publish: the draft equals the published version.")
        return redirect("authoring:rung", slug=module.slug, rung=draft.slug)
    try:
        version = services.publish_draft(draft, request.user)
    except PublishRefused as exc:
        messages.error(request, f"Not published: {exc}")
    else:
        messages.success(request, f"Published version {version.number}: learners get it now.")
    return redirect("authoring:rung", slug=module.slug, rung=draft.slug)


@_guarded
@require_POST
def rung_discard(request: HttpRequest, slug: str, rung: str) -> HttpResponse:
    """Drop the draft; a published rung goes back to its current version."""
    module, draft = _get_draft(request, slug, rung, may_edit_content)
    if draft.pk is not None:
        draft.delete()
        messages.success(request, "Draft discarded.")
    if Rung.objects.filter(module=module, slug=rung).exists():
        return redirect("authoring:rung", slug=module.slug, rung=rung)
    return redirect("authoring:module", slug=module.slug)


PREVIEW_TOO_LONG = f"No preview: the text has {{chars:,}} characters, and Markdown may have at most {MARKDOWN_MAX_CHARS:,}."


@_guarded
@require_POST
def markdown_preview(request: HttpRequest) -> HttpResponse:
    """The instructions as learners will see them (the same renderer)."""
    _require(request, may_open_authoring)
    text = request.POST.get("text", "")
    if len(text) > MARKDOWN_MAX_CHARS:
        return HttpResponse(format_html("<p class=\"error\">{}</p>", PREVIEW_TOO_LONG.format(chars=len(text))), status=413)
    return HttpResponse(render_markdown(text))


# --- Dashboards -----------------------------------------------------------------------


@_guarded
@require_GET
def module_dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    module = _get_module(request, slug, may_read_content)
    rungs = list(Rung.objects.filter(module=module, current_version__isnull=False).order_by("order", "slug"))
    return render(request, "authoring/dashboard.html", {"module": module, "rung": None, "rungs": rungs, "rows": stats.rung_table(module),
                                                         "charts": stats.charts_for(rungs),
                                                         "open_reports": aids_services.open_report_count(module)})


@_guarded
@require_GET
def rung_dashboard(request: HttpRequest, slug: str, rung: str) -> HttpResponse:
    module = _get_module(request, slug, may_read_content)
    rung_obj = get_object_or_404(Rung, module=module, slug=rung)
    return render(request, "authoring/dashboard.html", {"module": module, "rung": rung_obj, "rungs": [rung_obj], "rows": None,
                                                         "charts": stats.charts_for([rung_obj]),
                                                         "hint_use": aids_services.hint_use(rung_obj),
                                                         "speed": speed_board.speed_figures(rung_obj),
                                                         "open_reports": aids_services.open_report_count(module)})


# --- Problem reports from learners ------------------------------------------------------


def _get_report(request: HttpRequest, slug: str, pk: int, may: ModuleCapability) -> tuple[Module, ProblemReport]:
    """A report on one of the module's rungs, for those holding ``may`` on the module."""
    module = _get_module(request, slug, may)
    report = get_object_or_404(ProblemReport.objects.select_related("learner", "rung", "submission", "resolved_by"), pk=pk, rung__module=module)
    return module, report


# Reports a page of the queue lists (a busy module holds thousands: bench/scale.py).
REPORTS_PER_PAGE = 50


@_guarded
@require_GET
def report_queue(request: HttpRequest, slug: str) -> HttpResponse:
    module = _get_module(request, slug, may_read_content)
    status = request.GET.get("status", ReportStatus.OPEN)
    status = status if status in (*ReportStatus.values, "all") else ReportStatus.OPEN
    reports = Paginator(aids_services.report_queue(module, None if status == "all" else status), REPORTS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "authoring/reports.html", {"module": module, "reports": reports, "status": status, "statuses": ReportStatus.choices})


@_guarded
@require_http_methods(["GET", "POST"])
def report_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    module, report = _get_report(request, slug, pk, may_read_content if request.method == "GET" else may_resolve_reports)
    form = ResolveReportForm(request.POST or None, initial={"note": report.note})
    if request.method == "POST":
        try:
            if request.POST.get("action") == "reopen":
                aids_services.reopen_report(report)
                messages.success(request, "Report reopened.")
            elif form.is_valid():
                aids_services.resolve_report(report, by=request.user, note=form.cleaned_data["note"])
                messages.success(request, "Report resolved; the learner sees your note in the workspace.")
            else:
                return render(request, "authoring/report.html", {"module": module, "report": report, "form": form}, status=400)
        except AidRefused as exc:
            messages.error(request, exc.message)
        return redirect("authoring:report", module.slug, report.pk)
    return render(request, "authoring/report.html", {"module": module, "report": report, "form": form,
                                                     "can_resolve": may_resolve_reports(request.user, module)})


# --- Content roles on a module ---------------------------------------------------------------


@_guarded
@require_http_methods(["GET", "POST"])
def module_roles(request: HttpRequest, slug: str) -> HttpResponse:
    """Who holds which content role on the module, and the record of grants; editors and admins grant and revoke here."""
    module = _get_module(request, slug, may_read_content if request.method == "GET" else may_grant)
    form = ModuleRoleForm(request.POST or None)
    if request.method == "POST":
        actor: User = request.user  # type: ignore[assignment]  # logged in: _get_module
        try:
            if request.POST.get("action") == "revoke":
                user_id = request.POST.get("user", "")
                if not (user_id.isascii() and user_id.isdigit()):
                    raise RoleRefused(instructor_messages.ROLE_CHOOSE)
                content_roles.revoke_role(module, actor, int(user_id))
                messages.success(request, "Role revoked.")
            elif form.is_valid():
                held = content_roles.grant_role(module, actor, form.cleaned_data["username"], form.cleaned_data["role"])
                messages.success(request, f"{held.user.get_username()} is now {held.role} of this module.")
            else:
                return _roles_page(request, module, form, status=400)
        except RoleRefused as exc:
            messages.error(request, str(exc))
        return redirect("authoring:module-roles", slug=module.slug)
    return _roles_page(request, module, form)


def _roles_page(request: HttpRequest, module: Module, form: ModuleRoleForm, status: int = 200) -> HttpResponse:
    return render(request, "authoring/roles.html", {
        "module": module, "form": form, "roles": content_roles.roles_of(module), "events": content_roles.events_of(module),
        "can_grant": may_grant(request.user, module),
    }, status=status)


# --- Review and operations (admins) --------------------------------------------------------


@_guarded
@require_http_methods(["GET", "POST"])
def rejudge_detail(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    _require_admin(request)
    batch = get_object_or_404(Rejudge, pk=pk)
    form = RejudgeApplyForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            changed = rejudge.apply_rejudge(batch, request.user)
        except ValueError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"Recorded {changed} new outcome(s); the old ones are kept below.")
        return redirect("authoring:rejudge", pk=batch.pk)
    return render(request, "authoring/rejudge.html", {"rejudge": batch, "form": form, **rejudge.rejudge_state(batch)})


@_guarded
@require_GET
def operations_view(request: HttpRequest) -> HttpResponse:
    _require_admin(request)
    snapshot = operations.snapshot()
    if request.GET.get("format") == "json":
        return JsonResponse(operations.as_json(snapshot))
    return render(request, "authoring/operations.html", {"ops": snapshot, "admin_url": reverse("admin:index")})

