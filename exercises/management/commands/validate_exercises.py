from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from exercises.exceptions import CatalogError
from exercises.loader import read_catalog
from exercises.runners import default_runner
from exercises.validation import RungSource, validate_rung


class Command(BaseCommand):
    help = "Check every rung in the real sandbox: reference, starter and wrong solutions."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="Print a JSON array, one object per rung.")
        parser.add_argument("--path", default=str(settings.EXERCISES_DIR), help="Catalog folder (default: EXERCISES_DIR).")
        parser.add_argument("--rung", action="append", default=[], help="Only this rung slug (repeatable).")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            catalog = read_catalog(Path(options["path"]))
        except CatalogError as exc:
            raise CommandError(str(exc)) from exc
        runner = default_runner()
        reports = []
        for track in catalog:
            for module in track.modules:
                for rung in module.rungs:
                    if options["rung"] and rung.meta.slug not in options["rung"]:
                        continue
                    report = validate_rung(RungSource.from_files(rung), runner)
                    reports.append(report)
                    if not options["json"]:
                        self.stdout.write(f"{'OK  ' if report.ok else 'FAIL'} {report.rung} ({report.seconds} s)")
                        for fact in report.facts:
                            self.stdout.write(f"  [{'x' if fact.ok else ' '}] {fact.claim}: {fact.evidence}")
        if options["json"]:
            self.stdout.write(json.dumps([report.summary() for report in reports], indent=2))
        failed = [report.rung for report in reports if not report.ok]
        if failed:
            raise CommandError(f"{len(failed)} rung(s) failed validation: {', '.join(failed)}")
