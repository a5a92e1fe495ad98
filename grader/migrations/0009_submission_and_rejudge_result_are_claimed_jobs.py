# Submission and RejudgeResult inherit grader.models.ClaimedJob (issue 56).

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    """State only: the columns are unchanged.

    Only Python-side attributes differ (help texts, and enqueued_at's
    ``default=timezone.now`` in place of ``auto_now_add``: both fill it on
    insert, in Python). Left to itself, SQLite would copy the whole submission
    table to record that; the database has nothing to change.
    """

    dependencies = [
        ("grader", "0008_submission_machine"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="rejudgeresult",
                    name="claimed_by",
                    field=models.CharField(blank=True, help_text="The worker that claimed it last.", max_length=200),
                ),
                migrations.AlterField(
                    model_name="submission",
                    name="attempts",
                    field=models.PositiveIntegerField(default=0),
                ),
                migrations.AlterField(
                    model_name="submission",
                    name="enqueued_at",
                    field=models.DateTimeField(default=django.utils.timezone.now),
                ),
            ],
            database_operations=[],
        ),
    ]
