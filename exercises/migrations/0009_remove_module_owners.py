"""Module.owners goes: authoring 0009 made every owner an editor (authoring.ModuleRole; issue 57)."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("exercises", "0008_rungversion_strength"),
        ("authoring", "0009_owners_become_editors"),
    ]

    operations = [
        migrations.RemoveField(model_name="module", name="owners"),
    ]
