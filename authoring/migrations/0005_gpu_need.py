"""``gpu`` becomes no | preferred | required; a stored true (the old
"needs a GPU") becomes ``required``, false becomes ``no``. The column is
converted in place, so the old values arrive as text ("true"/"1", "false"/"0")."""

from typing import Any

from django.db import migrations, models

_TRUE = ("true", "1", "t", "True")


def _from_boolean(apps: Any, schema_editor: Any) -> None:
    rows = apps.get_model("authoring", "rungdraft").objects
    rows.filter(gpu__in=_TRUE).update(gpu="required")
    rows.exclude(gpu__in=("no", "preferred", "required")).update(gpu="no")


def _to_boolean(apps: Any, schema_editor: Any) -> None:
    rows = apps.get_model("authoring", "rungdraft").objects
    rows.filter(gpu__in=("required", "preferred")).update(gpu="1")
    rows.exclude(gpu="1").update(gpu="0")


class Migration(migrations.Migration):

    dependencies = [
        ('authoring', '0004_rungdraft_hints'),
    ]

    operations = [
        migrations.AlterField(
            model_name='rungdraft',
            name='gpu',
            field=models.CharField(choices=[('no', 'No GPU'), ('preferred', 'A GPU when there is one'), ('required', 'Needs a GPU')], default='no', max_length=10),
        ),
        migrations.RunPython(_from_boolean, _to_boolean),
    ]
