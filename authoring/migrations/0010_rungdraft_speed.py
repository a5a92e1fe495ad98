"""A draft's speed section and its files (issue 60): drafts, Check and Publish carry a speed-graded rung whole."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("authoring", "0009_owners_become_editors"),
    ]

    operations = [
        migrations.AddField(model_name="rungdraft", name="speed", field=models.JSONField(blank=True, default=dict)),
    ]
