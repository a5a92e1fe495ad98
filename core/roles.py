"""Who may do what: learners, instructors (create modules), content roles on a module (editor, viewer), admins (staff: all)."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, Group
from django.db.models import Model, Q

from .constants import AUTHOR_PERMISSION, INSTRUCTORS_GROUP, ContentRole
from .types import User


def is_admin(user: User | AnonymousUser) -> bool:
    return bool(user.is_authenticated and user.is_active and user.is_staff)


def _instructor_q() -> Q:
    # One query for what ModelBackend.has_perm would ask in two, plus the
    # group: every page header asks this, so it must stay cheap.
    app_label, _, codename = AUTHOR_PERMISSION.partition(".")
    return (
        Q(groups__name=INSTRUCTORS_GROUP)
        | Q(user_permissions__codename=codename, user_permissions__content_type__app_label=app_label)
        | Q(groups__permissions__codename=codename, groups__permissions__content_type__app_label=app_label)
    )


def is_instructor(user: User | AnonymousUser) -> bool:
    """Staff, a member of the instructors group, or a holder of the authoring permission."""
    if not (isinstance(user, User) and user.is_active):  # an AnonymousUser is never authenticated
        return False
    if user.is_staff or user.is_superuser:
        return True
    return bool(User.objects.filter(_instructor_q(), pk=user.pk).exists())


def content_role(user: User | AnonymousUser, module: Model) -> str | None:
    """``user``'s content role on ``module`` (an ``exercises.models.Module``): editor, viewer or None.

    Admins are editors of every module; anyone else holds what was granted
    (authoring.ModuleRole, asked through its related name ``module_roles``:
    core does not import authoring). A course role is never a content role.
    """
    if is_admin(user):
        return ContentRole.EDITOR
    if not (isinstance(user, User) and user.is_active):
        return None
    role: str | None = user.module_roles.filter(module_id=module.pk).values_list("role", flat=True).first()
    return role


def can_edit_module(user: User | AnonymousUser, module: Model) -> bool:
    """Whether ``user`` may change ``module``'s content: drafts, Check, Publish, import, grants (its editors and admins)."""
    return content_role(user, module) == ContentRole.EDITOR


def can_read_module_content(user: User | AnonymousUser, module: Model) -> bool:
    """Whether ``user`` may read all of ``module``'s content (references, hidden tests, export) and its dashboards: editors and viewers."""
    return content_role(user, module) in (ContentRole.EDITOR, ContentRole.VIEWER)


def is_instructor_or_holds_content_role(user: User | AnonymousUser) -> bool:
    """An instructor, or the holder of a content role on some module (module_roles: authoring.ModuleRole): the Author link, in one query."""
    if not (isinstance(user, User) and user.is_active):
        return False
    if user.is_staff or user.is_superuser:
        return True
    return bool(User.objects.filter(_instructor_q() | Q(module_roles__isnull=False), pk=user.pk).exists())


def make_instructor(user: User) -> None:
    """Put ``user`` in the instructors group (created on first use)."""
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS_GROUP)
    user.groups.add(group)
