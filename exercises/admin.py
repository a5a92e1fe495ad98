from __future__ import annotations

from django.contrib import admin

from .models import Module, Rung, RungVersion, Track


@admin.register(Track)
class TrackAdmin(admin.ModelAdmin[Track]):
    list_display = ("title", "slug", "order")


@admin.register(Module)
class ModuleAdmin(admin.ModelAdmin[Module]):
    list_display = ("title", "slug", "track", "order")
    list_filter = ("track",)


@admin.register(Rung)
class RungAdmin(admin.ModelAdmin[Rung]):
    list_display = ("slug", "module", "order", "current_version")
    list_filter = ("module",)


@admin.register(RungVersion)
class RungVersionAdmin(admin.ModelAdmin[RungVersion]):
    list_display = ("rung", "number", "title", "created_at")
    list_filter = ("rung",)
    readonly_fields = [field.name for field in RungVersion._meta.fields]

    def has_add_permission(self, request: object) -> bool:
        return False
