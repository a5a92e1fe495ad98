from __future__ import annotations

from django.contrib import admin

from .models import Assignment, AssignmentRung, Course, Extension, Feedback, JoinLink, Membership, SimilarityReport


class MembershipInline(admin.TabularInline[Membership, Course]):
    model = Membership
    extra = 0
    raw_id_fields = ["user"]


@admin.register(Course)
class CourseAdmin(admin.ModelAdmin[Course]):
    list_display = ["slug", "title", "term", "time_zone", "created_at"]
    search_fields = ["slug", "title"]
    inlines = [MembershipInline]


class AssignmentRungInline(admin.TabularInline[AssignmentRung, Assignment]):
    model = AssignmentRung
    extra = 0


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin[Assignment]):
    list_display = ["title", "course", "opens_at", "due_at", "late_policy"]
    list_filter = ["late_policy"]
    inlines = [AssignmentRungInline]


admin.site.register([JoinLink, Extension, Feedback, SimilarityReport])
