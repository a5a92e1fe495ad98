"""A catalog id names one module (issue 57): "Where next" links follow it.

Before the constraint, a later module that took an earlier one's id loses
it (the id is left blank, and the migration prints which): the first module
with an id kept the links, and that stays so.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models


def blank_later_duplicates(apps: Any, schema_editor: Any) -> None:
    Module = apps.get_model("exercises", "Module")
    seen: set[str] = set()
    for pk, slug, external_id in Module.objects.exclude(external_id="").order_by("pk").values_list("pk", "slug", "external_id"):
        if external_id in seen:
            Module.objects.filter(pk=pk).update(external_id="")
            print(f"\n  module {slug!r}: its id {external_id!r} was an earlier module's; left blank")
        seen.add(external_id)


class Migration(migrations.Migration):

    dependencies = [
        ("exercises", "0009_remove_module_owners"),
    ]

    operations = [
        migrations.RunPython(blank_later_duplicates, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="module",
            constraint=models.UniqueConstraint(condition=models.Q(("external_id", ""), _negated=True), fields=("external_id",),
                                               name="module_external_id_unique"),
        ),
    ]
