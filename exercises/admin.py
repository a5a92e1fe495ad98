from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from .models import Module, Rung, RungVersion, Track


class MadeByThePlatform:
    """Rows the platform writes (questions asked, score posts, LMS users): read here, never added by hand.
    Their add form has none of the required fields, so a POST to it was an IntegrityError (issue 55, the endpoint fuzz)."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Track)
class TrackAdmin(admin.ModelAdmin[Track]):
    list_display = ("title", "slug", "order")


@admin.register(Module)
class ModuleAdmin(admin.ModelAdmin[Module]):
    # Who may author a module: its content roles, granted on its authoring page (authoring.content_roles).
    list_display = ("title", "slug", "external_id", "track", "order")
    list_filter = ("track",)
    search_fields = ("slug", "title", "external_id")


@admin.register(Rung)
class RungAdmin(admin.ModelAdmin[Rung]):
    list_display = ("slug", "module", "order", "current_version")
    list_filter = ("module",)


@admin.register(RungVersion)
class RungVersionAdmin(admin.ModelAdmin[RungVersion]):
    list_display = ("rung", "number", "title", "created_at")
    list_filter = ("rung",)
    readonly_fields = [field.name for field in RungVersion._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
