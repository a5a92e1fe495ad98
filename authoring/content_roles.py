"""Content roles on catalog modules: who may do what on the authoring pages, and granting them.

One function per capability, so every view asks exactly one question and a
test can ask the same (issue 57):

- editors (and admins) change a module's content: module details, drafts,
  Check, Publish, Discard, import over it, resolve its learners' reports,
  grant and revoke its content roles;
- viewers read everything an editor reads (the editor pages read-only, the
  export with its references and hidden tests, dashboards, reports) and
  change nothing;
- anyone else gets nothing of the module here.

Roles are granted by an admin or an editor of the module, by username, on
the module's authoring page, never by an LTI launch; each grant and revoke
is a ModuleRoleEvent (who, whom, which role, when).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.db import transaction
from django.db.models import OuterRef, QuerySet, Subquery
from django.utils import timezone

from core.constants import ContentRole
from core.roles import can_edit_module, can_read_module_content, is_admin, is_instructor, is_instructor_or_holds_content_role
from core.types import User
from exercises.models import Module

from . import messages
from .exceptions import AuthoringError
from .models import ModuleRole, ModuleRoleEvent, RoleAction


class RoleRefused(AuthoringError):
    """A grant or revoke that is not done; the message says why."""


# --- Capabilities ----------------------------------------------------------------------


def may_open_authoring(user: User | AnonymousUser) -> bool:
    """The authoring home, the Author link and the Markdown preview: instructors and holders of a content role."""
    return is_instructor_or_holds_content_role(user)


def may_create_module(user: User | AnonymousUser) -> bool:
    """A new catalog module (its creator becomes its editor): instructors and admins."""
    return is_instructor(user)


def may_import(user: User | AnonymousUser) -> bool:
    """Uploading a catalog zip at all; each module in it is then checked with may_edit_content."""
    return is_instructor(user)


def may_read_content(user: User | AnonymousUser, module: Module) -> bool:
    """The module's authoring pages read-only, its drafts, Checks and their state, dashboards, progress CSV and reports."""
    return can_read_module_content(user, module)


def may_export(user: User | AnonymousUser, module: Module) -> bool:
    """The export zip, references and hidden tests included: a viewer reads all of them anyway."""
    return can_read_module_content(user, module)


def may_edit_content(user: User | AnonymousUser, module: Module) -> bool:
    """Module details, new rungs, saving drafts, Check, Discard, an import over the module."""
    return can_edit_module(user, module)


def may_publish(user: User | AnonymousUser, module: Module) -> bool:
    """Publishing a draft (after its passing Check)."""
    return can_edit_module(user, module)


def may_resolve_reports(user: User | AnonymousUser, module: Module) -> bool:
    """Resolving or reopening a learner's problem report on the module (the learner reads the note)."""
    return can_edit_module(user, module)


def may_grant(user: User | AnonymousUser, module: Module) -> bool:
    """Granting and revoking content roles on the module: its editors and admins, never anyone through a launch."""
    return can_edit_module(user, module)


# --- What a user holds --------------------------------------------------------------------


def modules_for(user: User | AnonymousUser) -> QuerySet[Module]:
    """The modules ``user`` holds a content role on, each annotated with ``content_role``; every module for an admin."""
    modules = Module.objects.select_related("track")
    if is_admin(user):
        return modules.all()
    if not (isinstance(user, User) and user.is_active):
        return modules.none()
    role = ModuleRole.objects.filter(module=OuterRef("pk"), user=user).values("role")[:1]
    return modules.filter(content_roles__user=user).annotate(content_role=Subquery(role))


def roles_of(module: Module) -> list[ModuleRole]:
    return list(ModuleRole.objects.filter(module=module).select_related("user", "granted_by").order_by("role", "user__username"))


def events_of(module: Module, limit: int = 50) -> list[ModuleRoleEvent]:
    return list(ModuleRoleEvent.objects.filter(module=module).order_by("-at", "-pk")[:limit])


# --- Granting -------------------------------------------------------------------------------


def _record(module: Module, actor: User | None, subject: User, role: str, action: str) -> ModuleRoleEvent:
    return ModuleRoleEvent.objects.create(
        module=module, actor=actor, actor_name=actor.get_username() if actor else "", subject=subject,
        subject_name=subject.get_username(), role=role, action=action, at=timezone.now(),
    )


def make_creator_editor(module: Module, user: User) -> ModuleRole:
    """The user who created or first imported a module is its editor (recorded as their own grant)."""
    role, created = ModuleRole.objects.get_or_create(module=module, user=user, defaults={"role": ContentRole.EDITOR, "granted_by": user})
    if created:
        _record(module, user, user, ContentRole.EDITOR, RoleAction.GRANT)
    return role


def grant_role(module: Module, actor: User, username: str, role: str) -> ModuleRole:
    """Give ``username`` the content role ``role`` on ``module`` (replacing the one they hold); refused unless ``actor`` may grant."""
    if not may_grant(actor, module):
        raise RoleRefused(messages.ROLE_GRANT_REFUSED)
    if role not in ContentRole.values:
        raise RoleRefused(messages.ROLE_UNKNOWN.format(role=role))
    subject = get_user_model().objects.filter(username=username.strip(), is_active=True).first()
    if subject is None:
        raise RoleRefused(messages.ROLE_NO_ACCOUNT.format(username=username.strip()))
    with transaction.atomic():
        held = ModuleRole.objects.select_for_update().filter(module=module, user=subject).first()
        if held is not None and held.role == role:
            raise RoleRefused(messages.ROLE_HELD_ALREADY.format(username=subject.get_username(), role=role))
        if held is not None and held.role == ContentRole.EDITOR:
            _refuse_losing_the_last_editor(module, actor, held)
        if held is None:
            held = ModuleRole.objects.create(module=module, user=subject, role=role, granted_by=actor, granted_at=timezone.now())
        else:
            changed = ModuleRole.objects.filter(pk=held.pk, role=held.role).update(role=role, granted_by=actor, granted_at=timezone.now())
            if changed != 1:
                raise RoleRefused(messages.ROLE_CHANGED_MEANWHILE)
            held.refresh_from_db()
        _record(module, actor, subject, role, RoleAction.GRANT)
    return held


def revoke_role(module: Module, actor: User, user_id: int) -> None:
    """Take away the content role ``user_id`` holds on ``module``; refused unless ``actor`` may grant."""
    if not may_grant(actor, module):
        raise RoleRefused(messages.ROLE_REVOKE_REFUSED)
    with transaction.atomic():
        held = ModuleRole.objects.select_for_update().filter(module=module, user_id=user_id).select_related("user").first()
        if held is None:
            raise RoleRefused(messages.ROLE_NOT_HELD)
        if held.role == ContentRole.EDITOR:
            _refuse_losing_the_last_editor(module, actor, held)
        deleted, _ = ModuleRole.objects.filter(pk=held.pk).delete()
        if deleted != 1:
            raise RoleRefused(messages.ROLE_CHANGED_MEANWHILE)
        _record(module, actor, held.user, held.role, RoleAction.REVOKE)


def _refuse_losing_the_last_editor(module: Module, actor: User, held: ModuleRole) -> None:
    """Only an admin may leave a module without editors (it is then the admins' alone)."""
    if is_admin(actor):
        return
    if not ModuleRole.objects.filter(module=module, role=ContentRole.EDITOR).exclude(pk=held.pk).exists():
        raise RoleRefused(messages.ROLE_LAST_EDITOR)
