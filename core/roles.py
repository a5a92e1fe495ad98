"""Who may do what: learners, instructors (own modules), admins (staff: all)."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, Group
from django.db.models import Model, Q

from .constants import AUTHOR_PERMISSION, INSTRUCTORS_GROUP
from .types import User


def is_admin(user: User | AnonymousUser) -> bool:
    return bool(user.is_authenticated and user.is_active and user.is_staff)


def is_instructor(user: User | AnonymousUser) -> bool:
    """Staff, a member of the instructors group, or a holder of the authoring permission."""
    if not (isinstance(user, User) and user.is_active):  # an AnonymousUser is never authenticated
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
    return bool(User.objects.filter(holds, pk=user.pk).exists())


def can_edit_module(user: User | AnonymousUser, module: Model) -> bool:
    """Whether ``user`` may author ``module`` (an ``exercises.models.Module``): an admin, or an instructor who owns it."""
    if is_admin(user):
        return True
    # owned_modules is Module.owners' related name: core does not import the catalog.
    return isinstance(user, User) and is_instructor(user) and User.objects.filter(pk=user.pk, owned_modules__pk=module.pk).exists()


def make_instructor(user: User) -> None:
    """Put ``user`` in the instructors group (created on first use)."""
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS_GROUP)
    user.groups.add(group)
