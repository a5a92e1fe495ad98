from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.runners import sandbox_image
from exercises.jobs import job_for
from exercises.models import Rung
from sandbox.jobs import with_failure
from sandbox.runner import SandboxRunner


class Command(BaseCommand):
    help = "Grade a solution file against a rung's visible tests (or --hidden ones) in the sandbox."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("rung", help="Rung slug, e.g. kv-cache-size")
        parser.add_argument("file", help="Python file with the solution")
        parser.add_argument("--hidden", action="store_true", help="Grade against the hidden tests (as Submit does).")
        parser.add_argument("--json", action="store_true", help="Print the result as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        rung = Rung.objects.select_related("current_version").filter(slug=options["rung"]).first()
        if rung is None or rung.current_version is None:
            raise CommandError(f"no published rung {options['rung']!r}; run load_exercises first")
        path = Path(options["file"])
        try:
            code = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{path}: {exc}") from exc
        kind = "submit" if options["hidden"] else "run"
        # Its own runner, with no pre-started containers: a one-off command
        # leaves nothing running behind it.
        runner = SandboxRunner(sandbox_image(), gpu_enabled=settings.SANDBOX_GPU_ENABLED, runtime=settings.SANDBOX_RUNTIME)
        try:
            result = runner.run(job_for(rung.current_version, kind, code, seed=secrets.randbelow(2**31)))
        finally:
            runner.close()
        tests = [{"name": test.name, "outcome": test.outcome, "message": with_failure(test.message, test.failure)} for test in result.tests]
        message = with_failure(result.message, result.failure)
        if options["json"]:
            self.stdout.write(json.dumps({"outcome": result.outcome, "message": message, "tests": tests}, indent=2))
        else:
            for test in tests:
                self.stdout.write(f"{test['outcome']:>8}  {test['name']}")
                if test["message"] and test["outcome"] != "passed":
                    self.stdout.write("          " + test["message"].replace("\n", "\n          "))
            self.stdout.write(f"outcome: {result.outcome}" + (f" - {message}" if message else ""))
        if result.outcome != "passed":
            raise SystemExit(1)
