"""Constraint step: ``rung`` becomes required and one job per learner and rung may be in flight.

Databases that applied the old 0002 already have both: the NOT NULL is
idempotent and the partial unique index is created only if missing (IF NOT
EXISTS, on SQLite and PostgreSQL alike). It fails, naming the index, if a
learner still has two jobs queued or running for one rung: let them finish
(or end them) and run it again.
"""

from __future__ import annotations

import django.db.models.deletion
from django.db import migrations, models

INDEX = "one_job_in_flight_per_learner_and_rung"


class Migration(migrations.Migration):
    dependencies = [
        ("exercises", "0001_initial"),
        ("grader", "0005_fill_submission_rung"),
    ]

    operations = [
        migrations.AlterField(
            model_name="submission",
            name="rung",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="submissions", to="exercises.rung"),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddConstraint(
                    model_name="submission",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("status__in", ["queued", "running"])), fields=("user", "rung"), name=INDEX
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f"CREATE UNIQUE INDEX IF NOT EXISTS {INDEX} ON grader_submission (user_id, rung_id) WHERE status IN ('queued', 'running')",
                    f"DROP INDEX IF EXISTS {INDEX}",
                ),
            ],
        ),
    ]
