"""The admin's user list gains "log out everywhere" (frontend/sessions.py)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest

from .sessions import end_sessions

User = get_user_model()


@admin.action(description="Log out everywhere (end every session of the selected users)")
def log_out_everywhere(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:  # type: ignore[type-arg]
    users = list(queryset)
    for user in users:
        # An admin who selects themself keeps the session they are using.
        end_sessions(user.pk, keep=request.session.session_key if user.pk == request.user.pk else None)
    modeladmin.message_user(request, f"Logged out everywhere: {len(users)} user(s); their sessions have ended.", messages.SUCCESS)


class SessionEndingUserAdmin(UserAdmin):  # type: ignore[type-arg]
    actions = [log_out_everywhere]


admin.site.unregister(User)
admin.site.register(User, SessionEndingUserAdmin)
