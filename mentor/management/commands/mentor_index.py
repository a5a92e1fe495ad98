"""Rebuild the mentor's passages now (they are also rebuilt on the first
question after the module's text changes)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from exercises.models import Module
from mentor import search


class Command(BaseCommand):
    help = "Rebuild the mentor's search index for one module or all of them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--module", help="module slug (default: every module)")

    def handle(self, *args: Any, **options: Any) -> None:
        module = None
        if options["module"]:
            module = Module.objects.filter(slug=options["module"]).first()
            if module is None:
                raise CommandError(f"no module {options['module']!r}")
        for slug, count in search.rebuild_index(module).items():
            self.stdout.write(f"{slug}: {count} passages")
