"""The gradebook: a course's learners x its assignments, and what each pass counts for.

A learner's counted pass of a rung is their first passing Submit
(``grader.Progress.solved_at``), judged against their deadlines for the
assignment (``courses.deadlines``: the assignment's, or their extension's).
An assignment's score is the mean over its rungs of that credit; the
course's counted score the mean over its assignments (those with rungs).
Hints count when revealed before the first pass (all of them while the
rung is unsolved).

Every reader here asks the database a fixed number of questions per chunk
of learners, however many assignments, rungs and submissions there are:
the page for one page of learners, the CSV chunk by chunk in constant
memory, grade passback for one learner.
"""

from __future__ import annotations

import csv
import datetime as dt
import zoneinfo
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Count, F, OuterRef, Prefetch, Q, Subquery

from aids.models import HintReveal
from core.csv_cells import csv_safe
from core.types import User
from exercises.models import Rung
from grader.constants import Kind, Outcome
from grader.models import Progress, Submission

from .constants import CourseRole
from .deadlines import Deadlines, Timing, deadlines_for
from .models import Assignment, AssignmentRung, Course, Extension, Membership

# Learners per page of the gradebook and per chunk of the CSV.
PAGE_SIZE = 50
CHUNK_SIZE = 100

# Worse is later: an assignment is as late as its latest-counted rung.
_SEVERITY = {Timing.ON_TIME: 0, Timing.LATE: 1, Timing.AFTER_CLOSE: 2}


@dataclass(frozen=True)
class Column:
    """One assignment of the course and its rungs, in order."""

    assignment: Assignment
    rungs: tuple[Rung, ...]

    @property
    def rung_ids(self) -> tuple[int, ...]:
        return tuple(rung.pk for rung in self.rungs)


@dataclass(frozen=True)
class RungResult:
    """One learner on one rung of one assignment."""

    rung: Rung
    solved_at: dt.datetime | None  # the first pass, whenever it was
    timing: Timing | None  # None: not solved
    credit: float
    attempts: int
    hints: int  # revealed before the first pass

    @property
    def counted(self) -> bool:
        return self.timing in (Timing.ON_TIME, Timing.LATE)


@dataclass(frozen=True)
class AssignmentResult:
    """One learner on one assignment."""

    assignment: Assignment
    deadlines: Deadlines
    extended: bool
    rungs: tuple[RungResult, ...]

    @property
    def score(self) -> float:
        return sum(each.credit for each in self.rungs) / len(self.rungs) if self.rungs else 0.0

    @property
    def solved_at(self) -> dt.datetime | None:
        """When the last of its rungs was first passed; None until all are."""
        times = [each.solved_at for each in self.rungs if each.solved_at is not None]
        return max(times) if self.rungs and len(times) == len(self.rungs) else None

    @property
    def timing(self) -> Timing | None:
        """The latest timing among its passes (on time, late, after the close); None when nothing is solved."""
        timings = [each.timing for each in self.rungs if each.timing is not None]
        return max(timings, key=_SEVERITY.__getitem__) if timings else None

    @property
    def attempts(self) -> int:
        return sum(each.attempts for each in self.rungs)

    @property
    def hints(self) -> int:
        return sum(each.hints for each in self.rungs)


@dataclass(frozen=True)
class LearnerRow:
    learner_id: int
    username: str
    results: tuple[AssignmentResult, ...]  # in the columns' order

    @property
    def score(self) -> float:
        """The course's counted score: the mean over assignments with rungs."""
        scored = [each.score for each in self.results if each.rungs]
        return sum(scored) / len(scored) if scored else 0.0


@dataclass(frozen=True)
class Gradebook:
    course: Course
    columns: tuple[Column, ...]
    page: Page[Any]  # of learner memberships
    rows: tuple[LearnerRow, ...]


def course_columns(course: Course) -> tuple[Column, ...]:
    """The course's assignments (by due date) and their rungs: two queries."""
    ordered = AssignmentRung.objects.select_related("rung__current_version").order_by("order", "pk")
    assignments = Assignment.objects.filter(course=course).prefetch_related(Prefetch("assignment_rungs", queryset=ordered))
    return tuple(Column(each, tuple(link.rung for link in each.assignment_rungs.all())) for each in assignments)


def learner_memberships(course: Course) -> Any:
    """The course's learners as a queryset of (user_id, user__username) dicts, by username."""
    return (Membership.objects.filter(course=course, role=CourseRole.LEARNER)
            .order_by("user__username", "user_id").values("user_id", "user__username"))


def build_gradebook(course: Course, page_number: int | str | None = 1, per_page: int = PAGE_SIZE) -> Gradebook:
    """One page of the gradebook: ``per_page`` learners x every assignment.

    Seven queries whatever the page, the number of assignments or of
    submissions: the columns (2), the page and its count (2), extensions,
    progress and hints (3).
    """
    columns = course_columns(course)
    page = Paginator(learner_memberships(course), per_page).get_page(page_number)
    learners = [(each["user_id"], each["user__username"]) for each in page.object_list]
    return Gradebook(course, columns, page, tuple(learner_rows(columns, learners)))


def learner_rows(columns: Sequence[Column], learners: Sequence[tuple[int, str]]) -> Iterator[LearnerRow]:
    """Each of ``learners`` ((id, username), in order) on every column: three queries in all."""
    ids = [learner_id for learner_id, _ in learners]
    rung_ids = {rung.pk for column in columns for rung in column.rungs}
    extensions: dict[tuple[int, int], Extension] = {}
    progress: dict[tuple[int, int], tuple[dt.datetime | None, int]] = {}
    hints: dict[tuple[int, int], int] = {}
    if ids and columns:
        extensions = {(each.assignment_id, each.learner_id): each for each in
                      Extension.objects.filter(assignment__in=[column.assignment for column in columns], learner_id__in=ids)}
        progress = {(user_id, rung_id): (solved_at, attempts) for user_id, rung_id, solved_at, attempts in
                    Progress.objects.filter(user_id__in=ids, rung_id__in=rung_ids).values_list("user_id", "rung_id", "solved_at", "attempts")}
        hints = hints_before_first_pass(ids, rung_ids)
    # Most learners have no extension: their deadlines are the assignment's, worked out once.
    usual = [(column, column.assignment.pk, column.rung_ids, deadlines_for(column.assignment)) for column in columns]
    for learner_id, username in learners:
        results = []
        for column, assignment_id, column_rung_ids, deadlines in usual:
            extension = extensions.get((assignment_id, learner_id))
            if extension is not None:
                deadlines = deadlines_for(column.assignment, extension)
            results.append(_result(column, column_rung_ids, deadlines, extension is not None, progress, hints, learner_id))
        yield LearnerRow(learner_id, username, tuple(results))


def hints_before_first_pass(learner_ids: Iterable[int], rung_ids: Iterable[int]) -> dict[tuple[int, int], int]:
    """{(learner id, rung id): hints revealed before the first pass, or all of them while unsolved}: one query."""
    first_pass = Progress.objects.filter(user_id=OuterRef("learner_id"), rung_id=OuterRef("rung_id")).values("solved_at")[:1]
    counts = (HintReveal.objects.filter(learner_id__in=learner_ids, rung_id__in=rung_ids)
              .annotate(first_pass=Subquery(first_pass))
              .filter(Q(first_pass__isnull=True) | Q(revealed_at__lt=F("first_pass")))
              .order_by().values("learner_id", "rung_id").annotate(n=Count("pk")).values_list("learner_id", "rung_id", "n"))
    return {(learner_id, rung_id): n for learner_id, rung_id, n in counts}


def _result(column: Column, rung_ids: tuple[int, ...], deadlines: Deadlines, extended: bool, progress: dict[tuple[int, int], tuple[dt.datetime | None, int]],
            hints: dict[tuple[int, int], int], learner_id: int) -> AssignmentResult:
    rungs = []
    for rung, rung_id in zip(column.rungs, rung_ids, strict=True):
        solved_at, attempts = progress.get((learner_id, rung_id), (None, 0))
        rungs.append(RungResult(
            rung=rung, solved_at=solved_at, timing=deadlines.timing(solved_at) if solved_at else None,
            credit=deadlines.credit(solved_at), attempts=attempts, hints=hints.get((learner_id, rung_id), 0),
        ))
    return AssignmentResult(column.assignment, deadlines, extended, tuple(rungs))


def iter_learner_chunks(course: Course, columns: Sequence[Column], chunk_size: int = CHUNK_SIZE) -> Iterator[list[LearnerRow]]:
    """Every learner of ``course`` (by username) on ``columns``, ``chunk_size`` learners at a time.

    Only one chunk is in memory at once: each is fetched after the last
    username of the one before (keyset, no OFFSET), then costs three queries.
    """
    after = ""
    while True:
        chunk = [(each["user_id"], each["user__username"])
                 for each in learner_memberships(course).filter(user__username__gt=after)[:chunk_size]]
        if not chunk:
            return
        yield list(learner_rows(columns, chunk))
        after = chunk[-1][1]


class _Echo:
    """A file for csv.writer whose write returns the line instead of keeping it."""

    def write(self, line: str) -> str:
        return line


def stream_gradebook_csv(course: Course, chunk_size: int = CHUNK_SIZE) -> Iterator[str]:
    """The whole gradebook as CSV text, one piece per chunk of learners: constant memory for any course size.

    One row per learner: username, the course's counted score, then per
    assignment its score, when it was solved, on time / late / after the
    close, the learner's due date, attempts and hints before the first
    pass. Times are ISO 8601 in the course's time zone; every text cell
    goes through ``csv_safe`` (a username or a title may start with ``=``).
    """
    zone = zoneinfo.ZoneInfo(course.time_zone)
    writer = csv.writer(_Echo())
    columns = course_columns(course)
    header = ["username", "course score"]
    for column in columns:
        title = column.assignment.title
        header += [f"{title}: score", f"{title}: solved at", f"{title}: timing", f"{title}: due", f"{title}: attempts", f"{title}: hints"]
    yield writer.writerow([csv_safe(each) for each in header])
    for chunk in iter_learner_chunks(course, columns, chunk_size):
        lines: list[str] = []
        for row in chunk:
            cells: list[str | int | float] = [csv_safe(row.username), round(row.score, 4)]
            for result in row.results:
                solved_at = result.solved_at
                cells += [round(result.score, 4), solved_at.astimezone(zone).isoformat() if solved_at else "",
                          result.timing.value if result.timing else "", result.deadlines.due_at.astimezone(zone).isoformat(),
                          result.attempts, result.hints]
            lines.append(writer.writerow(cells))
        # NOTE: the next chunk is built while this generator waits at the
        # yield: keep only this chunk's text, or two chunks are held at once.
        text = "".join(lines)
        del chunk, lines
        yield text


def counted_score(course: Course, learner: User) -> float:
    """``learner``'s counted score in ``course``, 0..1: what grade passback sends.

    The mean over the course's assignments (those with rungs) of each
    assignment's score; 0.0 when the course has none.
    """
    row = next(learner_rows(course_columns(course), [(learner.pk, learner.get_username())]))
    return row.score


def rung_results(course: Course, assignment: Assignment, rung: Rung, page_number: int | str | None = 1,
                 per_page: int = PAGE_SIZE) -> tuple[Page[Any], list[tuple[int, str, RungResult, AssignmentResult]]]:
    """One page of the course's learners on one rung of ``assignment``: (page, [(id, username, rung result, assignment result)])."""
    column = Column(assignment, (rung,))
    page = Paginator(learner_memberships(course), per_page).get_page(page_number)
    learners = [(each["user_id"], each["user__username"]) for each in page.object_list]
    return page, [(row.learner_id, row.username, row.results[0].rungs[0], row.results[0]) for row in learner_rows([column], learners)]


@dataclass(frozen=True)
class Attempt:
    submission: Submission
    graded_at: dt.datetime | None
    timing: Timing | None  # when it was graded, against the learner's deadlines
    first_pass: bool  # the pass the gradebook counts


def learner_attempts(assignment: Assignment, rung: Rung, learner_id: int) -> tuple[Deadlines, list[Attempt]]:
    """A learner's Submits of ``rung``, oldest first, each timed against their deadlines for ``assignment``.

    A Submit's time is when it was graded (``finished_at``), as the first
    pass's ``solved_at`` is.
    """
    extension = Extension.objects.filter(assignment=assignment, learner_id=learner_id).first()
    deadlines = deadlines_for(assignment, extension)
    submits = (Submission.objects.filter(user_id=learner_id, rung=rung, kind=Kind.SUBMIT).select_related("rung_version")
               .only("user_id", "rung_id", "kind", "status", "outcome", "enqueued_at", "finished_at", "rung_version__number")
               .order_by("enqueued_at", "pk"))
    attempts: list[Attempt] = []
    passed_before = False
    for each in submits:
        graded_at = each.finished_at
        first_pass = each.outcome == Outcome.PASSED and not passed_before
        passed_before = passed_before or first_pass
        attempts.append(Attempt(each, graded_at, deadlines.timing(graded_at) if graded_at else None, first_pass))
    return deadlines, attempts
