"""Who may do what: learners, instructors (own modules), admins (staff: all)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Q

from exercises.models import Module

from .constants import AUTHOR_PERMISSION, INSTRUCTORS_GROUP


def is_admin(user: Any) -> bool:
    return bool(user.is_authenticated and user.is_active and user.is_staff)


def is_instructor(user: Any) -> bool:
    """Staff, a member of the instructors group, or a holder of the authoring permission."""
    if not (user.is_authenticated and user.is_active):
        return False
    if user.is_staff or user.is_superuser:
        return True
    # One query for what ModelBackend.has_perm would ask in two, plus the
    # group: every page header asks this, so it must stay cheap.
    app_label, _, codename = AUTHOR_PERMISSION.partition(".")
    holds = (
        Q(groups__name=INSTRUCTORS_GROUP)
        | Q(user_permissions__codename=codename, user_permissions__content_type__app_label=app_label)
        | Q(groups__permissions__codename=codename, groups__permissions__content_type__app_label=app_label)
    )
    return bool(get_user_model().objects.filter(holds, pk=user.pk).exists())


def can_edit_module(user: Any, module: Module) -> bool:
    if is_admin(user):
        return True
    return is_instructor(user) and module.owners.filter(pk=user.pk).exists()


def editable_modules(user: Any) -> Any:
    """The modules ``user`` may author, as a queryset."""
    if is_admin(user):
        return Module.objects.select_related("track").all()
    if is_instructor(user):
        return Module.objects.select_related("track").filter(owners=user)
    return Module.objects.none()
