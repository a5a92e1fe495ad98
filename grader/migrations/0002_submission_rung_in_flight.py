from __future__ import annotations

from typing import Any

import django.db.models.deletion
from django.db import migrations, models


def fill_rung(apps: Any, schema_editor: Any) -> None:
    Submission = apps.get_model("grader", "Submission")
    for submission in Submission.objects.select_related("rung_version").only("rung_version__rung_id"):
        Submission.objects.filter(pk=submission.pk).update(rung_id=submission.rung_version.rung_id)


class Migration(migrations.Migration):
    dependencies = [
        ("exercises", "0001_initial"),
        ("grader", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="claimed_by",
            field=models.CharField(blank=True, help_text="The worker that claimed it last.", max_length=200),
        ),
        migrations.AddField(
            model_name="submission",
            name="rung",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name="submissions", to="exercises.rung"),
        ),
        migrations.RunPython(fill_rung, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="submission",
            name="rung",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="submissions", to="exercises.rung"),
        ),
        migrations.AddConstraint(
            model_name="submission",
            constraint=models.UniqueConstraint(
                condition=models.Q(("status__in", ["queued", "running"])),
                fields=("user", "rung"),
                name="one_job_in_flight_per_learner_and_rung",
            ),
        ),
    ]
