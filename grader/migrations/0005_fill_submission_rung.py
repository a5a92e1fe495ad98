"""Data step: every submission's ``rung`` from its version, in one set-based UPDATE.

A no-op where the old 0002 already filled it (only NULLs are touched).
"""

from __future__ import annotations

from typing import Any

from django.db import migrations
from django.db.models import OuterRef, Subquery


def fill_rung(apps: Any, schema_editor: Any) -> None:
    Submission = apps.get_model("grader", "Submission")
    RungVersion = apps.get_model("exercises", "RungVersion")
    rung_of_version = RungVersion.objects.filter(pk=OuterRef("rung_version_id")).values("rung_id")[:1]
    Submission.objects.filter(rung__isnull=True).update(rung_id=Subquery(rung_of_version))


class Migration(migrations.Migration):
    dependencies = [
        ("exercises", "0001_initial"),
        ("grader", "0004_rejudge_claims_and_submission_seed"),
    ]

    operations = [migrations.RunPython(fill_rung, migrations.RunPython.noop, elidable=True)]
