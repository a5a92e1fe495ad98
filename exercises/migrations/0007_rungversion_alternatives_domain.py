"""Independent correct solutions and the documented domain of a rung version (issue 58)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("exercises", "0006_gpu_need"),
    ]

    operations = [
        migrations.AddField(model_name="rungversion", name="alternatives", field=models.JSONField(blank=True, default=dict)),
        migrations.AddField(model_name="rungversion", name="domain", field=models.JSONField(blank=True, default=dict)),
    ]
