"""A draft's independent correct solutions and documented domain (issue 58)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("authoring", "0005_gpu_need"),
    ]

    operations = [
        migrations.AddField(model_name="rungdraft", name="alternatives", field=models.JSONField(blank=True, default=dict)),
        migrations.AddField(model_name="rungdraft", name="domain", field=models.JSONField(blank=True, default=dict)),
    ]
