"""``manage.py compact_runs``: compact the per-test rows of old Runs (grader/retention.py)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from grader.retention import DEFAULT_OLDER_THAN_DAYS, compact_runs


class Command(BaseCommand):
    help = "Move the per-test rows of Runs finished more than --older-than-days ago into their submission (Submits keep theirs)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--older-than-days", type=int, default=DEFAULT_OLDER_THAN_DAYS)
        parser.add_argument("--limit", type=int, default=None, help="at most this many Runs in this pass")

    def handle(self, *args: Any, older_than_days: int, limit: int | None, **options: Any) -> None:
        if older_than_days < 1:
            self.stderr.write("--older-than-days must be at least 1")
            raise SystemExit(2)
        runs, rows = compact_runs(older_than_days=older_than_days, limit=limit)
        self.stdout.write(f"compacted {runs} Runs ({rows} test rows)")
