"""Review: submissions with filters, highlighted code, per-test results and rejudging."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import smart_split, unescape_string_literal
from pygments import highlight  # type: ignore[import-untyped]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
from pygments.lexers import PythonLexer  # type: ignore[import-untyped]

from core.pagination import CappedPaginator
from core.types import User
from exercises.models import Rung, RungVersion

if TYPE_CHECKING:
    from django.utils.functional import _StrPromise

from .constants import Status
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


SEARCH_ID = re.compile(r"#?([0-9]{1,18})")
SEARCH_NUMBER = re.compile(r"[0-9]{1,18}")


def _unquoted(text: str) -> str:
    return unescape_string_literal(text) if len(text) > 1 and text[0] in "\"'" and text[0] == text[-1] else text


def submission_search(word: str) -> Q:
    """The submissions one word of the admin's search finds.

    A plain word finds the submissions of the learners whose username
    starts with it (auth_user's pattern index) and of the rungs whose slug
    contains it (a few hundred rungs), and, as ``42`` or ``#42``, the
    submission with that id. The learners and rungs are found first, so the
    submissions are read through their user and rung indexes: searched as
    a join by name (and the code by substring) it read the whole table.
    ``code:TEXT``, ``error:CODE`` and ``seed:N`` (the code contains TEXT,
    the error code is CODE, the seed is N) are on no index: they read every
    submission the list's filters leave.
    """
    prefix, colon, rest = word.partition(":")
    if colon and prefix in ("code", "error", "seed"):
        value = _unquoted(rest)
        if prefix == "code":
            return Q(code__contains=value)
        if prefix == "error":
            return Q(error_code=value)
        return Q(seed=int(value)) if SEARCH_NUMBER.fullmatch(value) else Q(pk__in=[])
    word = _unquoted(word)
    users = list(User.objects.filter(username__startswith=word).values_list("pk", flat=True))
    rungs = list(Rung.objects.filter(slug__icontains=word).values_list("pk", flat=True))
    found = Q(user_id__in=users) | Q(rung_id__in=rungs)
    match = SEARCH_ID.fullmatch(word)
    return found | Q(pk=int(match.group(1))) if match else found


class VersionFilter(admin.RelatedFieldListFilter):
    """Every rung version, named as RungVersion names itself, in one query that reads no version's texts.

    Read whole, a few hundred versions' instructions, code and tests took half a second of each list page (bench/scale.py).
    """

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> list[tuple[str, str | _StrPromise]]:
        versions = RungVersion.objects.order_by("rung__slug", "number").values_list("pk", "rung__slug", "number")
        return [(str(pk), f"{slug} v{number}") for pk, slug, number in versions]


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
    # Searched by get_search_results, each form on an index (bench/scale.py: a substring
    # of the code, the learner's name and the error code read every submission, 6 s).
    search_fields = ("=id",)
    search_help_text = ("A submission's id (42 or #42), a learner's username or its beginning, or a rung's slug or part of it. "
                        "code:TEXT, error:CODE and seed:N read every submission the filters leave: narrow them first (a rung, a version).")
    show_full_result_count = False  # a second COUNT(*) of the whole table on every filtered page
    # Newest first by id, which the primary key's index serves: by enqueued_at (the model's
    # ordering, which no index serves alone) the unfiltered list sorted the whole table.
    ordering = ("-pk",)
    list_per_page = 50  # rendering a row costs about 1 ms of CPU
    paginator = CappedPaginator  # "5,000+": the count stops there instead of reading every matching row
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

    def get_search_results(self, request: HttpRequest, queryset: QuerySet[Submission], search_term: str) -> tuple[QuerySet[Submission], bool]:
        """Every word of the search must match (as in Django's own search), each in one of the forms of :func:`submission_search`."""
        for word in smart_split(search_term):
            queryset = queryset.filter(submission_search(word))
        return queryset, False

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


@admin.register(Rejudge)
class RejudgeAdmin(admin.ModelAdmin[Rejudge]):
    list_display = ("pk", "target", "created_by", "created_at", "applied_at", "preview")
    list_filter = ("target", "applied_at")
    # The results are counted, not listed: a rejudge of a busy rung holds 100,000 of them
    # (bench/scale.py), each named by its submission (a query each). The preview lists them;
    # each submission's page shows its own.
    readonly_fields = ("created_by", "created_at", "target", "applied_at", "applied_by", "result_counts", "preview")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="results")
    def result_counts(self, obj: Rejudge) -> str:
        state = obj.results.aggregate(total=Count("pk"), done=Count("pk", filter=Q(status=Status.DONE)), applied=Count("pk", filter=Q(applied=True)))
        return f"{state['total']:,} submissions, {state['done']:,} graded again, {state['applied']:,} applied"

    @admin.display(description="preview / apply")
    def preview(self, obj: Rejudge) -> str:
        return format_html('<a href="{}">Open</a>', reverse("authoring:rejudge", args=[obj.pk]))


@admin.register(Progress)
class ProgressAdmin(admin.ModelAdmin[Progress]):
    list_display = ("user", "rung", "attempts", "best_outcome", "solved_at")
    list_filter = ("rung", "best_outcome")
    search_fields = ("user__username", "rung__slug")
