from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from .models import ModuleRole, ModuleRoleEvent, RungCheck, RungDraft


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


class _ReadOnly:
    """Content roles change only on the module's roles page (authoring.content_roles), where each change is recorded."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(ModuleRole)
class ModuleRoleAdmin(_ReadOnly, admin.ModelAdmin[ModuleRole]):
    list_display = ("module", "user", "role", "granted_by", "granted_at")
    list_filter = ("role", "module")
    search_fields = ("user__username", "module__slug")


@admin.register(ModuleRoleEvent)
class ModuleRoleEventAdmin(_ReadOnly, admin.ModelAdmin[ModuleRoleEvent]):
    list_display = ("at", "module", "actor_name", "action", "role", "subject_name")
    list_filter = ("action", "role", "module")
    search_fields = ("actor_name", "subject_name", "module__slug")
