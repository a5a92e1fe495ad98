from __future__ import annotations

from django.contrib import admin

from exercises.admin import MadeByThePlatform

from .models import ModuleIndex, Passage, Question


@admin.register(Question)
class QuestionAdmin(MadeByThePlatform, admin.ModelAdmin[Question]):
    list_display = ("created_at", "learner", "module", "rung", "text", "answered_by_model")
    list_filter = ("module", "answered_by_model", "created_at")
    search_fields = ("text", "learner__username")
    readonly_fields = [field.name for field in Question._meta.fields]


@admin.register(Passage)
class PassageAdmin(MadeByThePlatform, admin.ModelAdmin[Passage]):
    list_display = ("module", "key", "kind", "title", "url")
    list_filter = ("module", "kind")
    search_fields = ("key", "title", "text")
    readonly_fields = [field.name for field in Passage._meta.fields]


@admin.register(ModuleIndex)
class ModuleIndexAdmin(MadeByThePlatform, admin.ModelAdmin[ModuleIndex]):
    list_display = ("module", "passages", "built_at", "source_hash")
    readonly_fields = ("module", "passages", "built_at", "source_hash")
