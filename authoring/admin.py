from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from .models import RungCheck, RungDraft


@admin.register(RungDraft)
class RungDraftAdmin(admin.ModelAdmin[RungDraft]):
    list_display = ("slug", "module", "order", "rung", "updated_at", "updated_by")
    list_filter = ("module",)
    search_fields = ("slug", "title")


@admin.register(RungCheck)
class RungCheckAdmin(admin.ModelAdmin[RungCheck]):
    list_display = ("pk", "draft", "status", "ok", "seconds", "created_at")
    list_filter = ("status", "ok")
    readonly_fields = [field.name for field in RungCheck._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
