"""Every module owner of before becomes an editor of that module (issue 57), with a "migrated" event.

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
    for row in Owners.objects.select_related("user").order_by("module_id", "user_id").iterator():
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
    ]

    operations = [migrations.RunPython(owners_to_editors, editors_to_owners)]
