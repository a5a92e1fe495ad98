from __future__ import annotations

from django.contrib import admin

from .models import Progress, Submission, SubmissionTestResult


class TestResultInline(admin.TabularInline[SubmissionTestResult, Submission]):
    model = SubmissionTestResult
    extra = 0
    can_delete = False
    readonly_fields = ("order", "name", "outcome", "duration_s", "message", "detail", "hidden")


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin[Submission]):
    list_display = ("pk", "user", "rung_version", "kind", "status", "outcome", "enqueued_at")
    list_filter = ("kind", "status", "outcome", "rung_version__rung", "enqueued_at")
    search_fields = ("user__username", "code")
    readonly_fields = [field.name for field in Submission._meta.fields]
    inlines = [TestResultInline]


@admin.register(Progress)
class ProgressAdmin(admin.ModelAdmin[Progress]):
    list_display = ("user", "rung", "attempts", "best_outcome", "solved_at")
    list_filter = ("rung", "best_outcome")
