"""Running counts behind the authors' dashboards (``authoring.stats``), kept as jobs end.

A dashboard used to read every submission of its rungs several times over:
24 s for a module after a busy year (bench/scale.py). Each figure it shows
is a sum over submissions, so each is kept as a count, per rung
(``RungTally``: outcomes, graded and passing Submits per day, failed hidden
tests, latencies in hundredths of a second, learners with a graded Submit
and learners by Submits to their first pass), which is all a dashboard
reads. ``LearnerRungTally`` keeps each learner's place (graded Submits so
far, and to the first pass) for the counts their next Submit moves.

A count changes in the transaction that changes what it counts:

- a job ends (graded, stored as infra_error, cancelled, abandoned by the
  reaper): ``count_submission``, after its test rows are written;
- a rejudge is applied: ``withdraw_submission`` before a submission's grade
  changes, ``count_submission`` after, then ``recount_learner``.

Deleting submissions, or an account, in the admin takes theirs out
(``connect_deletions``); a deleted rung takes its tallies with it.
Compacting a Run's rows (``grader.retention``) changes nothing counted: a
Run adds only its latencies, and Submits keep their rows. Rows written
around these services (a bulk import, bench/scale_fill.py) leave the counts
behind: ``manage.py rebuild_tallies`` (``rebuild_tallies``) counts
everything again, as the migration that made the tables did.

Graded means what the dashboards have always counted: a Submit that ended
with any outcome but infra_error (a cancelled one included).
"""

from __future__ import annotations

import functools
import operator
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from typing import Any, TypeVar

from django.apps import apps as installed_apps
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, DurationField, ExpressionWrapper, F, Model, Q, QuerySet
from django.db.models.functions import TruncDate
from django.db.models.signals import post_delete, pre_delete
from django.utils import timezone

from .constants import CaseOutcome, Kind, Outcome, Status
from .models import LearnerRungTally, RungTally, Submission, SubmissionTestResult

Figure = RungTally.Figure
LATENCY_FIGURES = (Figure.WAIT, Figure.GRADING, Figure.TOTAL)
_FIELDS = ("rung_id", "user_id", "kind", "status", "outcome", "enqueued_at", "started_at", "finished_at")
_BATCH = 5000
_T = TypeVar("_T")

Tally = Counter[tuple[str, str]]


def centiseconds(delta: timedelta) -> int:
    """``delta`` in hundredths of a second, half away from zero: what the dashboard's two decimals show of it."""
    micro = delta // timedelta(microseconds=1)
    whole = (abs(micro) + 5_000) // 10_000
    return whole if micro >= 0 else -whole


def is_graded(kind: str, status: str, outcome: str) -> bool:
    return kind == Kind.SUBMIT and status == Status.DONE and outcome != Outcome.INFRA_ERROR


def figures_of(row: dict[str, Any], failed_tests: Iterable[str]) -> Tally:
    """What one submission (its ``_FIELDS``, and its failed hidden tests) adds to its rung's tallies."""
    tally: Tally = Counter()
    if row["status"] != Status.DONE:
        return tally
    enqueued, started, finished = row["enqueued_at"], row["started_at"], row["finished_at"]
    if finished is not None:
        tally[(Figure.TOTAL, str(centiseconds(finished - enqueued)))] += 1
        if started is not None:
            tally[(Figure.WAIT, str(centiseconds(max(started - enqueued, timedelta(0)))))] += 1
            tally[(Figure.GRADING, str(centiseconds(max(finished - started, timedelta(0)))))] += 1
    if row["kind"] != Kind.SUBMIT:
        return tally
    tally[(Figure.OUTCOME, row["outcome"])] += 1
    if not is_graded(row["kind"], row["status"], row["outcome"]):
        return tally
    if finished is not None:
        day = timezone.localdate(finished).isoformat()  # as TruncDate dates it, in the current time zone
        tally[(Figure.GRADED_ON, day)] += 1
        if row["outcome"] == Outcome.PASSED:
            tally[(Figure.PASSED_ON, day)] += 1
    for name in failed_tests:
        tally[(Figure.FAILED_TEST, name)] += 1
    return tally


def _failed_tests(pk: int) -> list[str]:
    return list(SubmissionTestResult.objects.filter(submission_id=pk, hidden=True).exclude(outcome=CaseOutcome.PASSED).values_list("name", flat=True))


def _lock_rung(rung_id: int) -> None:
    """Hold the rung's counts until the transaction ends. Every change to them takes this row first (then the
    learner's, then the counts'), so two changes never wait on each other in a circle (PostgreSQL would abort one,
    and a worker would store its job as infra_error)."""
    lock = RungTally.objects.select_for_update().filter(rung_id=rung_id, figure=Figure.LEARNERS, key="").values_list("pk", flat=True)
    if lock.first() is None:  # the rung's first count
        RungTally.objects.bulk_create([RungTally(rung_id=rung_id, figure=Figure.LEARNERS, key="")], ignore_conflicts=True)
        lock.get()


def _add(rung_id: int, tally: Tally, sign: int) -> None:
    """Add ``sign`` x ``tally`` to the rung's counts: the missing rows first (in key order), then one UPDATE per amount."""
    if not tally:
        return
    _lock_rung(rung_id)
    RungTally.objects.bulk_create([RungTally(rung_id=rung_id, figure=figure, key=key) for figure, key in sorted(tally)], ignore_conflicts=True)
    by_amount: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for (figure, key), count in tally.items():
        by_amount[sign * count][figure].append(key)
    for amount, keys in sorted(by_amount.items()):
        match = functools.reduce(operator.or_, (Q(figure=figure, key__in=names) for figure, names in keys.items()))
        changed = RungTally.objects.filter(match, rung_id=rung_id).update(count=F("count") + amount)
        if changed != sum(len(names) for names in keys.values()):
            raise RuntimeError(f"rung {rung_id}: {changed} tallies changed of {dict(keys)}")


def _read(pk: int) -> dict[str, Any] | None:
    row: dict[str, Any] | None = Submission.objects.filter(pk=pk).values(*_FIELDS).first()
    return row


def _move_learner(user_id: int, rung_id: int, change: Callable[[int, int | None], tuple[int, int | None]], *, create: bool = True) -> Tally:
    """Move the learner's tally of a rung from (graded Submits, Submits to the first pass) to ``change`` of it; what that
    moves in the rung's counts (learners with a graded Submit, learners by Submits to the first pass).
    ``create=False``: nothing when the learner has no tally (it is being deleted)."""
    key = {"user_id": user_id, "rung_id": rung_id}
    _lock_rung(rung_id)
    if create:
        LearnerRungTally.objects.bulk_create([LearnerRungTally(**key)], ignore_conflicts=True)
    rows = LearnerRungTally.objects.filter(**key)
    held = rows.select_for_update().values_list("graded_submits", "submits_to_first_pass").first()
    if held is None:
        return Counter()
    graded, first = held
    new_graded, new_first = change(graded, first)
    if rows.filter(graded_submits=graded, submits_to_first_pass=first).update(graded_submits=new_graded, submits_to_first_pass=new_first) != 1:
        raise RuntimeError(f"learner tally {key} changed while it was locked")
    moved: Tally = Counter()
    moved[(Figure.LEARNERS, "")] += (new_graded > 0) - (graded > 0)
    if first is not None:
        moved[(Figure.FIRST_PASS, str(first))] -= 1
    if new_first is not None:
        moved[(Figure.FIRST_PASS, str(new_first))] += 1
    return Counter({figure: count for figure, count in moved.items() if count})


def count_submission(pk: int, *, learner: bool = True) -> None:
    """Add an ended submission to the tallies: in the transaction that ended it (or changed its grade), after its test rows.

    ``learner``: also count it as the learner's next graded Submit, which
    holds because a learner has one job at a time per rung (they end in the
    order they were sent); a rejudge recounts the learner instead.
    """
    row = _read(pk)
    if row is None or row["status"] != Status.DONE:
        return
    graded = is_graded(row["kind"], row["status"], row["outcome"])
    tally = figures_of(row, _failed_tests(pk) if graded else [])
    if learner and graded:
        passed = row["outcome"] == Outcome.PASSED
        tally.update(_move_learner(row["user_id"], row["rung_id"], lambda count, first: (count + 1, first if first is not None or not passed else count + 1)))
    _add(row["rung_id"], tally, +1)


def withdraw_submission(pk: int) -> None:
    """Take a submission's grade out of its rung's tallies, before it changes (lock the row first); then ``recount_learner``."""
    row = _read(pk)
    if row is None or row["status"] != Status.DONE:
        return
    graded = is_graded(row["kind"], row["status"], row["outcome"])
    _add(row["rung_id"], figures_of(row, _failed_tests(pk) if graded else []), -1)


def learner_figures(outcomes: Iterable[str]) -> tuple[int, int | None]:
    """Graded Submits in the order they were sent -> (how many, how many up to and including the first pass)."""
    count, first = 0, None
    for outcome in outcomes:
        count += 1
        if first is None and outcome == Outcome.PASSED:
            first = count
    return count, first


def recount_learner(user_id: int, rung_id: int, *, create: bool = True) -> None:
    """The learner's tally of a rung from their Submits as they are now (after a rejudge changed some, or some were deleted)."""
    outcomes = (Submission.objects.filter(user_id=user_id, rung_id=rung_id, kind=Kind.SUBMIT, status=Status.DONE)
                .exclude(outcome=Outcome.INFRA_ERROR).order_by("enqueued_at", "pk").values_list("outcome", flat=True))
    now = learner_figures(outcomes)
    _add(rung_id, _move_learner(user_id, rung_id, lambda count, first: now, create=create), +1)


def rebuild_tallies(registry: Any = None) -> dict[str, int]:
    """Every tally counted again from the submissions as they are; the rows written per table.

    ``registry``: the models to use (a migration passes its historical
    ``apps``). The tables are emptied first, under a lock on PostgreSQL (on
    SQLite the first write locks the database): a job ending meanwhile
    waits, then counts itself on top of what this counted without it.
    """
    models = registry or installed_apps
    submissions = models.get_model("grader", "Submission")._default_manager.all()
    test_rows = models.get_model("grader", "SubmissionTestResult")._default_manager
    rung_tally = models.get_model("grader", "RungTally")
    learner_tally = models.get_model("grader", "LearnerRungTally")
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(f'LOCK TABLE "{rung_tally._meta.db_table}", "{learner_tally._meta.db_table}" IN EXCLUSIVE MODE')
        rung_tally._default_manager.all().delete()
        learner_tally._default_manager.all().delete()
        counts = _counted(submissions, test_rows)
        learners = 0
        for chunk in _chunks(_learner_tallies(_graded_of(submissions))):
            learner_tally._default_manager.bulk_create(
                [learner_tally(user_id=user_id, rung_id=rung_id, graded_submits=n, submits_to_first_pass=first) for user_id, rung_id, n, first in chunk])
            learners += len(chunk)
            _count_learners(chunk, counts)
        rungs = rung_tally._default_manager.bulk_create(
            (rung_tally(rung_id=rung_id, figure=figure, key=key, count=n) for rung_id, tally in counts.items() for (figure, key), n in tally.items()),
            batch_size=_BATCH,
        )
    return {"rung_tallies": len(rungs), "learner_tallies": learners}


def _graded_of(submissions: Any) -> Any:
    return submissions.filter(kind=Kind.SUBMIT, status=Status.DONE).exclude(outcome=Outcome.INFRA_ERROR)


def _counted(submissions: Any, test_rows: Any) -> dict[int, Tally]:
    """What ``submissions`` add to their rungs' tallies, read in a few aggregates (the learners' figures aside)."""
    counts: dict[int, Tally] = defaultdict(Counter)
    submits = submissions.filter(kind=Kind.SUBMIT, status=Status.DONE)
    for rung_id, outcome, n in submits.values_list("rung_id", "outcome").annotate(n=Count("pk")).order_by():
        counts[rung_id][(Figure.OUTCOME, outcome)] += n
    graded = _graded_of(submissions)
    days = (graded.filter(finished_at__isnull=False).annotate(day=TruncDate("finished_at")).values_list("rung_id", "day")
            .annotate(total=Count("pk"), passed=Count("pk", filter=Q(outcome=Outcome.PASSED))).order_by())
    for rung_id, day, total, passed in days:
        counts[rung_id][(Figure.GRADED_ON, day.isoformat())] += total
        if passed:
            counts[rung_id][(Figure.PASSED_ON, day.isoformat())] += passed
    failed = (test_rows.filter(submission__in=graded, hidden=True).exclude(outcome=CaseOutcome.PASSED)
              .values_list("submission__rung_id", "name").annotate(n=Count("pk")).order_by())
    for rung_id, name, n in failed:
        counts[rung_id][(Figure.FAILED_TEST, name)] += n
    _count_latencies(submissions, counts)
    return counts


def _count_learners(rows: Iterable[tuple[int, int, int, int | None]], counts: dict[int, Tally]) -> None:
    for _user_id, rung_id, graded, first in rows:
        if graded:
            counts[rung_id][(Figure.LEARNERS, "")] += 1
        if first is not None:
            counts[rung_id][(Figure.FIRST_PASS, str(first))] += 1


def forget_learner(user_id: int) -> None:
    """Take everything of a learner out of the rungs' tallies: before their account is deleted (their own tallies go with it)."""
    counts = _counted(Submission.objects.filter(user_id=user_id), SubmissionTestResult.objects)
    learners = LearnerRungTally.objects.filter(user_id=user_id).values_list("user_id", "rung_id", "graded_submits", "submits_to_first_pass")
    _count_learners(learners, counts)
    for rung_id, tally in sorted(counts.items()):
        _add(rung_id, tally, -1)


def _chunks(rows: Iterable[_T]) -> Iterator[list[_T]]:
    chunk: list[_T] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == _BATCH:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _count_latencies(submissions: Any, counts: dict[int, Tally]) -> None:
    """The latency figures of every ended job, one row per distinct (rung, wait, grading, total) from the database."""
    def since(end: str, start: str) -> ExpressionWrapper[Any]:
        return ExpressionWrapper(F(end) - F(start), output_field=DurationField())

    ended = (submissions.filter(status=Status.DONE, finished_at__isnull=False)
             .annotate(total_t=since("finished_at", "enqueued_at"), wait_t=since("started_at", "enqueued_at"), grading_t=since("finished_at", "started_at"))
             .values_list("rung_id", "total_t", "wait_t", "grading_t").annotate(n=Count("pk")).order_by())
    for rung_id, total, wait, grading, n in ended:
        counts[rung_id][(Figure.TOTAL, str(centiseconds(total)))] += n
        if wait is not None:
            counts[rung_id][(Figure.WAIT, str(centiseconds(max(wait, timedelta(0)))))] += n
            counts[rung_id][(Figure.GRADING, str(centiseconds(max(grading, timedelta(0)))))] += n


def _learner_tallies(graded: Any) -> Iterator[tuple[int, int, int, int | None]]:
    """(learner, rung, graded Submits, Submits to the first pass) of each learner and rung with a graded Submit."""
    rows = graded.order_by("user_id", "rung_id", "enqueued_at", "pk").values_list("user_id", "rung_id", "outcome").iterator(chunk_size=_BATCH)
    pair: tuple[int, int] | None = None
    outcomes: list[str] = []
    for user_id, rung_id, outcome in rows:
        if (user_id, rung_id) != pair:
            if pair is not None:
                yield (*pair, *learner_figures(outcomes))
            pair, outcomes = (user_id, rung_id), []
        outcomes.append(outcome)
    if pair is not None:
        yield (*pair, *learner_figures(outcomes))


# --- Deletions: an account, or submissions deleted in the admin -----------------------------------------


def _started_from(origin: Any, model: type[Model]) -> bool:
    """Whether a deletion was started on ``model`` (a row or a queryset of them), not reached by a cascade."""
    started = origin.model if isinstance(origin, QuerySet) else type(origin)
    return issubclass(started, model)


def _submission_going(sender: Any, instance: Submission, origin: Any = None, **kwargs: Any) -> None:
    """Before submissions deleted themselves go: their grades out, and their learner's place emptied (refilled after)."""
    if not _started_from(origin, Submission):
        return  # a deleted rung takes its tallies with it; a deleted account is forgotten at once (``forget_learner``)
    withdraw_submission(instance.pk)
    if instance.kind == Kind.SUBMIT:
        _add(instance.rung_id, _move_learner(instance.user_id, instance.rung_id, lambda count, first: (0, None), create=False), +1)


def _submission_gone(sender: Any, instance: Submission, origin: Any = None, **kwargs: Any) -> None:
    if _started_from(origin, Submission) and instance.kind == Kind.SUBMIT:
        recount_learner(instance.user_id, instance.rung_id, create=False)


def _account_going(sender: Any, instance: Any, origin: Any = None, **kwargs: Any) -> None:
    if _started_from(origin, sender):
        forget_learner(instance.pk)


def connect_deletions() -> None:
    """Keep the tallies right when submissions or accounts are deleted (the admin): called once, by the app's ``ready``."""
    pre_delete.connect(_submission_going, sender=Submission, dispatch_uid="tallies-submission-going")
    post_delete.connect(_submission_gone, sender=Submission, dispatch_uid="tallies-submission-gone")
    pre_delete.connect(_account_going, sender=settings.AUTH_USER_MODEL, dispatch_uid="tallies-account-going")
