from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from exercises.exceptions import CatalogError
from exercises.services import sync_catalog
from exercises.strength import record_shipped_strength


class Command(BaseCommand):
    help = "Load the exercise catalog from files into the database (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--path", default=str(settings.EXERCISES_DIR), help="Catalog folder (default: EXERCISES_DIR).")

    def handle(self, *args: Any, **options: Any) -> None:
        from pathlib import Path

        try:
            report = sync_catalog(Path(options["path"]))
        except CatalogError as exc:
            raise CommandError(str(exc)) from exc
        measured = record_shipped_strength(Path(options["path"]))
        self.stdout.write(
            f"{report.tracks} track(s), {report.modules} module(s), {report.rungs} rung(s); "
            f"new versions: {', '.join(report.new_versions) or 'none'}; "
            f"modules changed: {', '.join(report.changed_modules) or 'none'}; "
            f"test strength recorded: {', '.join(measured) or 'none'}"
        )
