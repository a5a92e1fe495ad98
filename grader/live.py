"""A running job's test rows, shown as its tests finish, written in batches.

The harness reports each test as it ends. Writing a row and publishing
"changed" for each one cost the worker a database write per test (a
Submit has 16-26 hidden tests of a few milliseconds each), and every
"changed" makes each page following the job over server-sent events fetch
its whole state again. So ``LiveTestRows`` writes the rows it holds when its
last write is at least ``every_s`` old (the first at once), and when the job
moves on to its next phase (a Submit's isolated re-run, which reports no
test for a while). Rows still held when the job ends are never written:
the final grade replaces every row in one transaction
(``grader.results.write_test_rows``) just after.

Everything runs in the thread that reads the job's events, so no write of
this worker's lands after its own final grade. A write is also conditional on
the worker's claim, in one transaction that locks the job's row first: once
the job is cancelled, or reaped and graded by another worker, a worker still
running it writes no row (it would overwrite the final grade's rows, or fill
a cancelled job's).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from django.db import transaction

from sandbox.jobs import CaseResult, Failure

from . import events, lifecycle, results
from .models import Submission

log = logging.getLogger(__name__)


class LiveTestRows:
    """Receives a job's events (``on_event``); writes its live test rows in batches."""

    def __init__(self, submission: Submission, claim: lifecycle.Claim, every_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.submission = submission
        self.claim = claim
        self.every_s = every_s
        self.clock = clock
        self.order = 0
        self.held: list[tuple[int, CaseResult]] = []
        self.last_write: float | None = None
        self.writes = 0
        # Every test of the first run as reported live: the results of a job
        # whose container was killed before it could send its report.
        self.reported: list[CaseResult] = []
        self.rerunning = False

    def on_event(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "test":
            self.order += 1
            case = CaseResult(name=str(data["name"]), outcome=str(data["outcome"]), duration_s=float(data.get("duration_s") or 0.0),
                              message=str(data.get("message") or ""), failure=failure if isinstance(failure := data.get("failure"), Failure) else None)
            self.held.append((self.order, case))
            if not self.rerunning:
                self.reported.append(case)
            if self.last_write is None or self.clock() - self.last_write >= self.every_s:
                self.write()
        elif kind == "rerun":
            self.rerunning = True
            self.write()

    def write(self) -> None:
        """Write the rows held, then tell the pages following the job."""
        if not self.held:
            return
        held, self.held = self.held, []
        self.last_write = self.clock()
        version = self.submission.rung_version
        rows = [(order, results.present_test(case, kind=self.submission.kind, version=version)) for order, case in held]
        try:
            with transaction.atomic():
                if not lifecycle.lock_held(self.claim):
                    log.info("submission %s: claim lost; its live test rows are dropped", self.submission.pk)
                    return
                results.write_live_test_rows(self.submission, rows)
        except Exception:
            log.exception("submission %s: could not record its live test rows", self.submission.pk)
            return
        self.writes += 1
        events.publish_changed(self.submission.channel)
