"""``manage.py rebuild_tallies``: count the dashboards' figures again from every submission (grader/tallies.py)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from grader.tallies import rebuild_tallies


class Command(BaseCommand):
    help = ("Count the authors' dashboards' figures again from every submission: after rows were written "
            "around the grading services (a bulk import). Jobs ending meanwhile wait for it.")

    def handle(self, *args: Any, **options: Any) -> None:
        written = rebuild_tallies()
        self.stdout.write(f"counted again: {written['rung_tallies']} rung tallies, {written['learner_tallies']} learner tallies")
