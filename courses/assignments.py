"""Assignments of a course: their rungs and dates, learners' extensions, and what a learner sees of them.

Every timing decision goes through ``courses.deadlines``: the workspace's
"practice" mark and the deadlines a learner reads agree with the gradebook.
Dates are stored in UTC and shown in the course's time zone.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone

from core.types import User
from exercises.models import Rung
from grader import messages
from grader.constants import Kind
from grader.models import Progress, Submission

from .constants import CourseRole, LatePolicy
from .deadlines import Deadlines, Timing, deadlines_for
from .models import Assignment, AssignmentRung, Course, Extension

# How a deadline reads: the course's time zone is named, so a learner
# abroad knows which 23:59 it is.
WHEN_FORMAT = "%a %d %b %Y, %H:%M %Z"


@dataclass(frozen=True)
class AssignmentDetails:
    title: str
    rungs: Sequence[Rung]  # in the order the assignment lists them
    opens_at: dt.datetime
    due_at: dt.datetime
    late_policy: LatePolicy
    hard_close_at: dt.datetime | None
    late_factor: float


def date_problems(
    opens_at: dt.datetime, due_at: dt.datetime, late_policy: str, hard_close_at: dt.datetime | None, late_factor: float | None
) -> dict[str, str]:
    """What is wrong with an assignment's dates and late policy, by form field (empty when nothing)."""
    problems: dict[str, str] = {}
    if due_at <= opens_at:
        problems["due_at"] = "The due date must be after the open date."
    if late_policy == LatePolicy.PENALTY:
        if hard_close_at is None:
            problems["hard_close_at"] = "Late work needs a hard close: the last moment a late Submit counts."
        elif hard_close_at <= due_at:
            problems["hard_close_at"] = "The hard close must be after the due date."
        if late_factor is None or not 0.0 <= late_factor <= 1.0:
            problems["late_factor"] = "The late factor is a number from 0 to 1 (0.5 counts a late pass half)."
    return problems


def _fields(details: AssignmentDetails) -> dict[str, object]:
    penalty = details.late_policy == LatePolicy.PENALTY
    return {
        "title": details.title,
        "opens_at": details.opens_at,
        "due_at": details.due_at,
        "late_policy": details.late_policy,
        # With late work closed these mean nothing: stored neutral, so a
        # policy switched back later starts from a clean form.
        "hard_close_at": details.hard_close_at if penalty else None,
        "late_factor": details.late_factor if penalty else 1.0,
    }


def _set_rungs(assignment: Assignment, rungs: Sequence[Rung]) -> None:
    AssignmentRung.objects.filter(assignment=assignment).delete()
    AssignmentRung.objects.bulk_create(AssignmentRung(assignment=assignment, rung=rung, order=index) for index, rung in enumerate(rungs))


def create_assignment(course: Course, details: AssignmentDetails) -> Assignment:
    with transaction.atomic():
        assignment = Assignment.objects.create(course=course, **_fields(details))
        _set_rungs(assignment, details.rungs)
    return assignment


def update_assignment(course: Course, assignment_id: int, details: AssignmentDetails) -> bool:
    """Change an assignment of ``course``; False when it was deleted meanwhile. Passes already made are judged by the new dates."""
    with transaction.atomic():
        changed = Assignment.objects.filter(pk=assignment_id, course=course).update(**_fields(details))
        if changed != 1:
            return False
        _set_rungs(Assignment(pk=assignment_id, course=course), details.rungs)
    return True


def delete_assignment(course: Course, assignment_id: int) -> bool:
    """Delete an assignment of ``course`` with its extensions; learners' submissions stay theirs."""
    deleted, _ = Assignment.objects.filter(pk=assignment_id, course=course).delete()
    return deleted > 0


def extension_problems(assignment: Assignment, due_at: dt.datetime, hard_close_at: dt.datetime | None) -> dict[str, str]:
    problems: dict[str, str] = {}
    if due_at <= assignment.opens_at:
        problems["due_at"] = "The extended due date must be after the assignment opens."
    if hard_close_at is not None and hard_close_at <= due_at:
        problems["hard_close_at"] = "The extended hard close must be after the extended due date."
    return problems


def grant_extension(assignment: Assignment, learner: User, due_at: dt.datetime, hard_close_at: dt.datetime | None, by: User) -> Extension:
    """Give ``learner`` their own deadlines for ``assignment`` (replacing an earlier extension)."""
    if assignment.late_policy != LatePolicy.PENALTY:
        hard_close_at = None
    extension, _ = Extension.objects.update_or_create(
        assignment=assignment,
        learner=learner,
        defaults={"due_at": due_at, "hard_close_at": hard_close_at, "granted_by": by, "granted_at": timezone.now()},
    )
    return extension


def remove_extension(assignment: Assignment, learner_id: int) -> bool:
    deleted, _ = Extension.objects.filter(assignment=assignment, learner_id=learner_id).delete()
    return deleted == 1


# ---- What a learner sees ----


@dataclass(frozen=True)
class LearnerDeadline:
    """One of a learner's assignments, as the module page and the workspace show it."""

    assignment: Assignment
    deadlines: Deadlines
    extended: bool
    state: str  # a key of grader.messages.DEADLINE_STATE
    sentence: str
    rung_ids: tuple[int, ...]  # of the rungs asked about, the ones this assignment has


def _when(at: dt.datetime, zone: ZoneInfo) -> str:
    return timezone.localtime(at, zone).strftime(WHEN_FORMAT)


def deadline_state(deadlines: Deadlines, now: dt.datetime) -> str:
    if now < deadlines.opens_at:
        return "not_open"
    timing = deadlines.timing(now)
    return {Timing.ON_TIME: "open", Timing.LATE: "late", Timing.AFTER_CLOSE: "closed"}[timing]


def deadline_sentence(deadlines: Deadlines, time_zone: str, now: dt.datetime) -> tuple[str, str]:
    """The state of ``deadlines`` at ``now`` and its sentence, dates in ``time_zone``."""
    zone = ZoneInfo(time_zone)
    state = deadline_state(deadlines, now)
    sentence = messages.DEADLINE_STATE[state].format(
        opens=_when(deadlines.opens_at, zone),
        due=_when(deadlines.due_at, zone),
        closes=_when(deadlines.closes_at, zone),
        percent=round(deadlines.late_factor * 100),
    )
    return state, sentence


def _learner_assignments(user: User, rung_ids: Iterable[int]) -> tuple[list[Assignment], dict[int, Extension], dict[int, list[int]]]:
    ids = list(rung_ids)
    links = list(
        AssignmentRung.objects.filter(
            rung_id__in=ids, assignment__course__memberships__user=user, assignment__course__memberships__role=CourseRole.LEARNER
        )
        .select_related("assignment__course")
        .order_by("assignment__due_at", "assignment_id", "order")
    )
    assignments: dict[int, Assignment] = {}
    rungs_of: dict[int, list[int]] = {}
    for link in links:
        assignments.setdefault(link.assignment_id, link.assignment)
        rungs_of.setdefault(link.assignment_id, []).append(link.rung_id)
    extensions = (
        {ext.assignment_id: ext for ext in Extension.objects.filter(learner=user, assignment_id__in=list(assignments))}
        if assignments
        else {}
    )
    return list(assignments.values()), extensions, rungs_of


def _learner_deadline(
    assignment: Assignment, extension: Extension | None, time_zone: str, now: dt.datetime, rung_ids: tuple[int, ...]
) -> LearnerDeadline:
    deadlines = deadlines_for(assignment, extension)
    state, sentence = deadline_sentence(deadlines, time_zone, now)
    if extension is not None:
        sentence = f"{sentence} · {messages.DEADLINE_EXTENDED}"
    return LearnerDeadline(assignment, deadlines, extension is not None, state, sentence, rung_ids)


def learner_deadlines(user: User, rung_ids: Iterable[int], now: dt.datetime | None = None) -> list[LearnerDeadline]:
    """``user``'s deadlines, as a learner of their courses, for the assignments that hold any of ``rung_ids``, soonest due first.

    Two queries, none when the user is in no course's assignment with these rungs.
    """
    now = now or timezone.now()
    assignments, extensions, rungs_of = _learner_assignments(user, rung_ids)
    return [
        _learner_deadline(assignment, extensions.get(assignment.pk), assignment.course.time_zone, now, tuple(rungs_of[assignment.pk]))
        for assignment in assignments
    ]


def practice_submissions(user: User, rung: Rung, submissions: Iterable[Submission]) -> set[int]:
    """Which of ``user``'s Submits at ``rung`` came after the close of every assignment of theirs that holds it.

    Graded as any Submit, they count for nothing: practice. A Submit is
    timed when the learner sent it (``enqueued_at``, as ``Progress.solved_at``
    is), not when a busy queue graded it. None is practice for a learner
    whose courses do not assign the rung.
    """
    assignments, extensions, _ = _learner_assignments(user, [rung.pk])
    if not assignments:
        return set()
    all_deadlines = [deadlines_for(assignment, extensions.get(assignment.pk)) for assignment in assignments]
    practice = set()
    for submission in submissions:
        if submission.kind != Kind.SUBMIT:
            continue
        if all(deadlines.timing(submission.enqueued_at) is Timing.AFTER_CLOSE for deadlines in all_deadlines):
            practice.add(submission.pk)
    return practice


@dataclass(frozen=True)
class LearnerRung:
    rung: Rung
    solved_at: dt.datetime | None
    standing: str  # a learner's sentence: not solved, solved on time, late, after the close


@dataclass(frozen=True)
class LearnerAssignment:
    deadline: LearnerDeadline
    rungs: list[LearnerRung]


def course_assignments_for_learner(course: Course, user: User, now: dt.datetime | None = None) -> list[LearnerAssignment]:
    """A learner's view of ``course``'s assignments: their deadlines (extension applied) and where each rung stands."""
    now = now or timezone.now()
    assignments = list(course.assignments.prefetch_related("assignment_rungs__rung__current_version", "assignment_rungs__rung__module"))
    extensions = {ext.assignment_id: ext for ext in Extension.objects.filter(learner=user, assignment__course=course)}
    rung_ids = {link.rung_id for assignment in assignments for link in assignment.assignment_rungs.all()}
    solved = dict(Progress.objects.filter(user=user, rung_id__in=rung_ids, solved_at__isnull=False).values_list("rung_id", "solved_at"))
    entries = []
    for assignment in assignments:
        links = list(assignment.assignment_rungs.all())
        deadline = _learner_deadline(
            assignment, extensions.get(assignment.pk), course.time_zone, now, tuple(link.rung_id for link in links)
        )
        deadlines = deadline.deadlines
        rungs = []
        for link in links:
            solved_at = solved.get(link.rung_id)
            standing = (
                messages.PASS_STANDING["unsolved"] if solved_at is None else messages.PASS_STANDING[deadlines.timing(solved_at).value]
            )
            rungs.append(LearnerRung(link.rung, solved_at, standing))
        entries.append(LearnerAssignment(deadline, rungs))
    return entries
