"""Retention: the per-test rows of old Runs, compacted into their submission.

A Run's tests are its visible ones, and a learner runs them again and
again: over a year most per-test rows belong to Runs nobody looks at. Yet a
learner can reopen any attempt from their history, and a teacher any
submission from a learner's timeline, so nothing is thrown away: an old
Run's rows are moved, losslessly, into one JSON value on the submission
(``archived_tests``) with their counts, and deleted. Every reader goes
through ``stored_tests`` and ``with_test_counts``, which read either form.

The policy (docs/operations.md, "Retention"): only Runs, finished more than
``older_than_days`` ago (90 by default), and never a learner's latest Run
of a rung (its result is what the workspace shows on load). Submits always
keep their rows: they are the grade, and rejudges compare against them.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Count, F, IntegerField, Max, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from .constants import CaseOutcome, Kind, Status
from .models import Submission, SubmissionTestResult

DEFAULT_OLDER_THAN_DAYS = 90
_FIELDS = ("order", "name", "outcome", "duration_s", "message", "detail", "hidden")


def with_test_counts(submissions: QuerySet[Submission]) -> QuerySet[Submission]:
    """Annotate ``test_count`` and ``passed_count``, from the rows or, for a compacted Run, its archived counts."""
    return submissions.annotate(
        test_count=Count("test_results") + F("archived_test_count"),
        passed_count=Count("test_results", filter=Q(test_results__outcome=CaseOutcome.PASSED)) + F("archived_passed_count"),
    )


def stored_tests(submission: Submission) -> list[SubmissionTestResult]:
    """The submission's per-test results in order, whether kept as rows or compacted (unsaved rows then)."""
    if submission.archived_tests is None:
        return list(submission.test_results.order_by("order"))
    return [SubmissionTestResult(submission=submission, **{name: row[name] for name in _FIELDS}) for row in submission.archived_tests]


def compactable_runs(*, older_than_days: int = DEFAULT_OLDER_THAN_DAYS, now: Any = None) -> QuerySet[Submission]:
    """Runs the policy lets go of their rows: finished before the cut-off, not yet compacted, not a learner's latest Run of its rung."""
    cutoff = (now or timezone.now()) - timedelta(days=older_than_days)
    latest = (
        Submission.objects.filter(user=OuterRef("user"), rung=OuterRef("rung"), kind=Kind.RUN, status=Status.DONE)
        .order_by().values("user").annotate(last=Max("pk")).values("last")
    )
    return (
        Submission.objects.filter(kind=Kind.RUN, status=Status.DONE, finished_at__lt=cutoff, archived_tests__isnull=True)
        .annotate(latest_run=Subquery(latest, output_field=IntegerField()))
        .exclude(pk=F("latest_run"))
        .order_by("pk")
    )


@transaction.atomic
def compact_run(pk: int) -> int:
    """Move one Run's rows into its ``archived_tests``; the number of rows moved (0 if it was done already)."""
    rows = list(SubmissionTestResult.objects.select_for_update().filter(submission_id=pk).order_by("order").values(*_FIELDS))
    archived = Submission.objects.filter(pk=pk, kind=Kind.RUN, status=Status.DONE, archived_tests__isnull=True).update(
        archived_tests=rows,
        archived_test_count=len(rows),
        archived_passed_count=sum(1 for row in rows if row["outcome"] == CaseOutcome.PASSED),
    )
    if archived != 1:
        return 0
    SubmissionTestResult.objects.filter(submission_id=pk).delete()
    return len(rows)


def compact_runs(*, older_than_days: int = DEFAULT_OLDER_THAN_DAYS, limit: int | None = None) -> tuple[int, int]:
    """Compact the Runs the policy allows, one transaction each: (Runs compacted, rows moved)."""
    pks = compactable_runs(older_than_days=older_than_days).values_list("pk", flat=True)
    runs = moved = 0
    for pk in pks[:limit] if limit else pks.iterator(chunk_size=1000):
        count = compact_run(pk)
        if count:
            runs, moved = runs + 1, moved + count
    return runs, moved
