"""Every module owner of before becomes an editor of that module (issue 57), with a "migrated" event,
except the ownerships LTI launches handed out.

Before issue 57 an Instructor launch from any course of a registered LMS
made its launcher an owner of the linked module: that was the hole (an LMS
instructor could export every hidden test). An account a launch made (a
django-lti ``LtiUser`` points at it) had no other way to become an owner,
so its ownerships are not carried over: each is recorded as a "revoke"
event by the migration, for an admin to grant again where it was meant.

exercises 0009 removes Module.owners after this has run. Backwards, the
editors become owners again (viewers had no equivalent) and the roles go.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def owners_to_editors(apps: Any, schema_editor: Any) -> None:
    Module = apps.get_model("exercises", "Module")
    ModuleRole, ModuleRoleEvent = apps.get_model("authoring", "ModuleRole"), apps.get_model("authoring", "ModuleRoleEvent")
    Owners = Module.owners.through
    launch_made = set(apps.get_model("lti_tool", "LtiUser").objects.exclude(auth_user=None).values_list("auth_user_id", flat=True))
    for row in Owners.objects.select_related("user").order_by("module_id", "user_id").iterator():
        if row.user_id in launch_made:
            ModuleRoleEvent.objects.create(module_id=row.module_id, subject_id=row.user_id, subject_name=row.user.username,
                                           role="editor", action="revoke")
            continue
        _, created = ModuleRole.objects.get_or_create(module_id=row.module_id, user_id=row.user_id, defaults={"role": "editor"})
        if created:
            ModuleRoleEvent.objects.create(module_id=row.module_id, subject_id=row.user_id, subject_name=row.user.username,
                                           role="editor", action="migrated")


def editors_to_owners(apps: Any, schema_editor: Any) -> None:
    Module = apps.get_model("exercises", "Module")
    ModuleRole = apps.get_model("authoring", "ModuleRole")
    Owners = Module.owners.through
    for role in ModuleRole.objects.filter(role="editor").order_by("pk").iterator():
        Owners.objects.get_or_create(module_id=role.module_id, user_id=role.user_id)


class Migration(migrations.Migration):

    dependencies = [
        ("authoring", "0008_module_roles"),
        ("exercises", "0008_rungversion_strength"),
        ("lti_tool", "0008_ltideployment_pns_url_and_more"),
    ]

    operations = [migrations.RunPython(owners_to_editors, editors_to_owners)]
