from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.runners import default_runner
from exercises.exceptions import CatalogError
from exercises.loader import read_catalog
from exercises.strength import strength_from_summary, write_shipped_strength
from exercises.validation import RungReport, RungSource, validate_rung


class Command(BaseCommand):
    help = (
        "Check every rung in the real sandbox: reference, starter, wrong solutions, alternatives (three seeds) and the reference "
        "behind its domain guard; then score its hidden tests on the reference's mutants."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="Print a JSON array, one object per rung.")
        parser.add_argument("--path", default=str(settings.EXERCISES_DIR), help="Catalog folder (default: EXERCISES_DIR).")
        parser.add_argument("--rung", action="append", default=[], help="Only this rung slug (repeatable).")
        parser.add_argument("--no-mutants", action="store_true", help="Skip mutation testing (faster).")
        parser.add_argument(
            "--min-mutation-score", type=float, default=None,
            help="Also fail a rung whose mutation score is below this (default: report the score only).",
        )
        parser.add_argument(
            "--write-strength", action="store_true",
            help="Record each passing rung's test strength in strength.json at the catalog's root (docs/authoring.md, \"Test strength\").",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            catalog = read_catalog(Path(options["path"]))
        except CatalogError as exc:
            raise CommandError(str(exc)) from exc
        runner = default_runner()
        reports = []
        started = time.monotonic()
        for track in catalog:
            for module in track.modules:
                for rung in module.rungs:
                    if options["rung"] and rung.meta.slug not in options["rung"]:
                        continue
                    report = validate_rung(RungSource.from_files(rung), runner, mutants=not options["no_mutants"])
                    reports.append(report)
                    figures = strength_from_summary(report.summary())
                    if options["write_strength"] and report.ok and figures:
                        write_shipped_strength(Path(options["path"]), rung.meta.slug, rung.content_hash, figures)
                    if not options["json"]:
                        self._print(report)
        if options["json"]:
            self.stdout.write(json.dumps([report.summary() for report in reports], indent=2))
        else:
            self.stdout.write(f"{len(reports)} rung(s) in {time.monotonic() - started:.1f} s")
        failed = [report.rung for report in reports if not report.ok]
        floor = options["min_mutation_score"]
        if floor is not None:
            failed += [report.rung for report in reports if report.ok and report.mutation is not None and report.mutation.mutation_score < floor]
        if failed:
            raise CommandError(f"{len(failed)} rung(s) failed validation: {', '.join(failed)}")

    def _print(self, report: RungReport) -> None:
        self.stdout.write(f"{'OK  ' if report.ok else 'FAIL'} {report.rung} ({report.seconds} s)")
        for fact in report.facts:
            self.stdout.write(f"  [{'x' if fact.ok else ' '}] {fact.claim}: {fact.evidence}")
        for warning in report.warnings:  # worth a look, never a failure (an empty wrong solution...)
            self.stdout.write(f"  warning: {warning}")
        mutation = report.mutation
        if mutation is None:
            return
        self.stdout.write(
            f"  mutation score {mutation.mutation_score:.3f}: {mutation.killed} of {mutation.mutants} mutants killed, "
            f"{mutation.equivalent} equivalent, {len(mutation.surviving)} surviving ({mutation.seconds} s in {mutation.containers} containers)"
        )
        for mutant in mutation.surviving:
            self.stdout.write(f"  surviving {mutant['id']} (line {mutant['line']}):")
            for line in str(mutant["diff"]).splitlines()[2:]:
                self.stdout.write(f"      {line}")
        for mutant_id in mutation.stale_equivalent:
            self.stdout.write(f"  warning: equivalent mutant {mutant_id} does not exist (any more)")
        for mutant_id in mutation.killed_equivalent:
            self.stdout.write(f"  warning: mutant {mutant_id} is marked equivalent but the hidden tests kill it")
