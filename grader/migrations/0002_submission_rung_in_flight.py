"""Schema step: Submission gains ``claimed_by`` and a nullable ``rung``.

This migration used to fill ``rung`` row by row and then make it required
and add the in-flight constraint, all in one transaction: on PostgreSQL
that mixes a data change with ALTER TABLE (pending trigger events) and
holds the table for the whole loop. It keeps its name, so databases that
applied the old version stay consistent; the data step is 0005 and the
constraint step 0006, both safe to run where the old version already did
their work.
"""

from __future__ import annotations

import django.db.models.deletion
from django.db import migrations, models


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
    ]
