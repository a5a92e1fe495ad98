# RungCheck inherits grader.models.ClaimedJob (issue 56); its status choices
# are grader's Status, with the same values as the CheckStatus it replaces.

from django.db import migrations, models


class Migration(migrations.Migration):
    """State only: a help text, nothing in the database."""

    dependencies = [
        ("authoring", "0006_rungdraft_alternatives_domain"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="rungcheck",
                    name="claimed_by",
                    field=models.CharField(blank=True, help_text="The worker that claimed it last.", max_length=200),
                ),
            ],
            database_operations=[],
        ),
    ]
