"""Review: submissions with filters, highlighted code, per-test results and rejudging."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight  # type: ignore[import-untyped]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
from pygments.lexers import PythonLexer  # type: ignore[import-untyped]

from core.types import User
from exercises.models import RungVersion

if TYPE_CHECKING:
    from django.utils.functional import _StrPromise

from .models import Progress, Rejudge, RejudgeResult, Submission, SubmissionTestResult
from .rejudge import start_rejudge, without_version_texts


def highlighted(code: str) -> SafeString:
    """Read-only Python with colours; Pygments escapes the code."""
    html = highlight(code, PythonLexer(), HtmlFormatter(noclasses=True, linenos="table", style="default"))
    return mark_safe(f'<div class="highlighted-code" style="max-height:40rem;overflow:auto">{html}</div>')  # escaped by Pygments


class TestResultInline(admin.TabularInline[SubmissionTestResult, Submission]):
    model = SubmissionTestResult
    extra = 0
    can_delete = False
    readonly_fields = ("order", "name", "outcome", "duration_s", "message", "detail", "hidden")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class RejudgeResultInline(admin.TabularInline[RejudgeResult, Submission]):
    """Every rejudge of this submission: the audit trail of its grades."""

    model = RejudgeResult
    fk_name = "submission"
    extra = 0
    can_delete = False
    fields = ("rejudge", "old_version", "old_outcome", "new_version", "new_outcome", "status", "applied", "finished_at")
    readonly_fields = fields
    verbose_name_plural = "Rejudges (old and new grades)"

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class VersionFilter(admin.RelatedFieldListFilter):
    """Every rung version, named in one query (RungVersion's name reads its rung)."""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> list[tuple[str, str | _StrPromise]]:
        return [(str(version.pk), str(version)) for version in RungVersion.objects.select_related("rung").order_by("rung__slug", "number")]


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin[Submission]):
    list_display = ("pk", "user", "rung", "version_number", "kind", "status", "outcome", "seed", "enqueued_at", "latency")
    # At a year of submissions (bench/scale.py) the "only related" filters read
    # every submission (SELECT DISTINCT) on each page, the versions' names cost
    # a query each, a learner filter listed 10,000 names and the date
    # hierarchy scanned the table: the rungs and versions are listed whole
    # (a few hundred), a learner is found by the search, dates by "enqueued".
    list_filter = (
        "rung",
        ("rung_version", VersionFilter),
        "outcome",
        "kind",
        "status",
        "enqueued_at",
    )
    search_fields = ("=id", "=seed", "user__username", "rung__slug", "code", "error_code")
    show_full_result_count = False  # a second COUNT(*) of the whole table on every filtered page
    list_select_related = ("user", "rung", "rung_version__rung")
    exclude = ("code",)
    readonly_fields = ["highlighted_code", *[field.name for field in Submission._meta.fields if field.name != "code"]]
    inlines = [TestResultInline, RejudgeResultInline]
    actions = ["rejudge_against_current", "rejudge_against_original"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Submission]:
        rows = super().get_queryset(request)
        match = request.resolver_match
        if request.method == "GET" and match is not None and match.url_name == "grader_submission_changelist":
            # The list shows neither the code nor the version's texts: 100 rows read 100 versions whole otherwise.
            return rows.defer("code", "stdout", "stderr", *without_version_texts("rung_version"))
        return rows

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # A grade changes only through a rejudge, which keeps the old one.
        return False

    @admin.display(description="version", ordering="rung_version__number")
    def version_number(self, obj: Submission) -> str:
        return f"v{obj.rung_version.number}"

    @admin.display(description="latency (s)")
    def latency(self, obj: Submission) -> str:
        if obj.finished_at is None:
            return "—"
        return f"{(obj.finished_at - obj.enqueued_at).total_seconds():.2f}"

    @admin.display(description="code")
    def highlighted_code(self, obj: Submission) -> SafeString:
        return highlighted(obj.code)

    def _rejudge(self, request: HttpRequest, queryset: QuerySet[Submission], target: str) -> HttpResponse | None:
        assert isinstance(request.user, User)  # the admin site lets in only signed-in staff
        rejudge = start_rejudge(queryset.select_related("rung__current_version", "rung_version"), target=target, user=request.user)
        if not rejudge.results.exists():
            self.message_user(request, "None of the selected submissions has finished grading (cancelled ones are left out): nothing to rejudge.")
            return None
        return HttpResponseRedirect(reverse("authoring:rejudge", args=[rejudge.pk]))

    @admin.action(description="Rejudge against the rung's current version (preview first)")
    def rejudge_against_current(self, request: HttpRequest, queryset: QuerySet[Submission]) -> HttpResponse | None:
        return self._rejudge(request, queryset, Rejudge.Target.CURRENT)

    @admin.action(description="Rejudge against the original version (preview first)")
    def rejudge_against_original(self, request: HttpRequest, queryset: QuerySet[Submission]) -> HttpResponse | None:
        return self._rejudge(request, queryset, Rejudge.Target.ORIGINAL)


class RejudgeResultRows(admin.TabularInline[RejudgeResult, Rejudge]):
    model = RejudgeResult
    extra = 0
    can_delete = False
    fields = ("submission", "old_version", "old_outcome", "new_version", "new_outcome", "status", "applied")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Rejudge)
class RejudgeAdmin(admin.ModelAdmin[Rejudge]):
    list_display = ("pk", "target", "created_by", "created_at", "applied_at", "preview")
    list_filter = ("target", "applied_at")
    readonly_fields = ("created_by", "created_at", "target", "applied_at", "applied_by", "preview")
    inlines = [RejudgeResultRows]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="preview / apply")
    def preview(self, obj: Rejudge) -> str:
        return format_html('<a href="{}">Open</a>', reverse("authoring:rejudge", args=[obj.pk]))


@admin.register(Progress)
class ProgressAdmin(admin.ModelAdmin[Progress]):
    list_display = ("user", "rung", "attempts", "best_outcome", "solved_at")
    list_filter = ("rung", "best_outcome")
    search_fields = ("user__username", "rung__slug")
