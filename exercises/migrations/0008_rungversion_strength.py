"""The test strength of a rung version, shown to learners (issue 58, item 4)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("exercises", "0007_rungversion_alternatives_domain"),
    ]

    operations = [
        migrations.AddField(model_name="rungversion", name="strength", field=models.JSONField(blank=True, default=dict)),
    ]
