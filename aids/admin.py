from __future__ import annotations

from django.contrib import admin

from .models import HintReveal, ProblemReport


@admin.register(HintReveal)
class HintRevealAdmin(admin.ModelAdmin[HintReveal]):
    list_display = ("learner", "rung", "number", "revealed_at")
    list_filter = ("rung",)
    search_fields = ("learner__username", "rung__slug")


@admin.register(ProblemReport)
class ProblemReportAdmin(admin.ModelAdmin[ProblemReport]):
    list_display = ("pk", "rung", "learner", "status", "created_at", "resolved_at")
    list_filter = ("status", "rung__module")
    search_fields = ("learner__username", "rung__slug", "message")
    raw_id_fields = ("submission",)
