"""Similarity of a course's learners' code for one rung of an assignment (issue 57, item 5).

Which code: each learner's **latest passing Submit** of the rung (a Run,
a failing or cancelled Submit are not compared), for the course's learners
only (staff, and anyone no longer enrolled, are left out), at most
SIMILARITY_MAX_LEARNERS of them (the most recent) and the first
SIMILARITY_MAX_CODE_CHARS characters of each.

How: copydetect's fingerprints (pygments tokens with names and strings
folded, k-grams of NOISE_T characters, winnowed), with the starter code of
every version the compared Submits were made against as its boilerplate,
so the code every learner was given never counts. A pair's score is the
larger of the two shares (the share of A's fingerprinted code found in B,
and of B's in A): a short solution copied whole into a longer one still
scores 1. Pairs sharing fewer than MIN_OVERLAP filtered characters are
idioms, not copies, and are left out. What matched is stored as character
ranges of each code, which the pair page marks; copydetect's own HTML
report is never used (learner code is hostile).

The report's state is a small state machine of conditional UPDATEs:
queued -> running (the task's claim) -> done or failed. A task that dies
without a word (its worker killed at the hard time limit, or restarted)
leaves a report that ``is_stale`` after STALE_AFTER_S: the pages show it as
stopped, and the next request marks it failed before queueing a new one.
"""

from __future__ import annotations

import datetime as dt
import io
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import Max, QuerySet
from django.utils import timezone

from core.types import User
from core.write_guard import outside_write_transaction
from exercises.models import Rung, RungVersion
from grader import lifecycle
from grader.constants import QUEUE_SUBMIT, Kind, Outcome, Status
from grader.models import Submission

from .constants import CourseRole, ReportState
from .models import Assignment, Membership, SimilarityReport

log = logging.getLogger(__name__)

TASK_NAME = "courses.build_similarity_report_task"
# A report is CPU work of seconds on a grading worker: it waits with the Submits.
QUEUE = QUEUE_SUBMIT

# Bounds: 200 learners of 60-line solutions take about 3 s; of 16,000-character ones about 35 s.
SIMILARITY_MAX_LEARNERS = 200
SIMILARITY_MAX_CODE_CHARS = 16_000
# Pairs kept per report, highest first.
SIMILARITY_MAX_PAIRS = 300
# Reports of one course queued or running at once (one per assignment and rung besides).
SIMILARITY_MAX_IN_FLIGHT_PER_COURSE = 2
THRESHOLD_DEFAULT = 0.6

# copydetect's defaults: k-grams of 25 filtered characters, every one kept (window 1).
NOISE_T = 25
WINDOW = 1
MIN_OVERLAP = 2 * NOISE_T

# The task's limits stay inside the broker's visibility timeout (else a running report is redelivered).
HARD_TIME_LIMIT_S = max(30, min(150, settings.BROKER_VISIBILITY_TIMEOUT_S - 30))
SOFT_TIME_LIMIT_S = HARD_TIME_LIMIT_S - 15
# The comparison stops itself before the soft limit, so the report says why.
WORK_BUDGET_S = SOFT_TIME_LIMIT_S - 10
# A report still queued or running this long after it was asked for has stopped (its task died).
STALE_AFTER_S = HARD_TIME_LIMIT_S + 600

_IN_FLIGHT = (ReportState.QUEUED, ReportState.RUNNING)

# What the staff read (never a learner): why a report failed, why a request was refused.
FAILED_TOO_SLOW = "Comparing took longer than {seconds} s, so the report stopped. Lower the number of learners or ask an admin."
FAILED_OURS = "The report failed on our side ({kind}); request it again, and tell an admin if it keeps failing."
FAILED_STALE = "The report stopped without finishing (its worker was probably restarted); request it again."
REFUSED_IN_FLIGHT = "This course already has {count} similarity reports queued or running; request this one once they are done."

# The only task of the similarity report, by name: not registered with the reaper
# (a report is no ClaimedJob); a stale report is failed when it is requested again.
_JOB = lifecycle.JobType(
    label="similarity",
    model=SimilarityReport,
    task=TASK_NAME,
    queue_of=lambda report: QUEUE,
    hard_limit_s=lambda: float(HARD_TIME_LIMIT_S),
    abandoned=lambda: {"state": ReportState.FAILED, "error": FAILED_STALE},
)


class SimilarityRefused(Exception):
    """A report cannot be queued now; the message says why, for the staff member who asked."""


class _OutOfTime(Exception):
    pass


@dataclass(frozen=True)
class Learner:
    """One learner's compared code: their latest passing Submit of the rung."""

    submission_id: int
    user_id: int
    version_id: int
    code: str


# --- Requesting -------------------------------------------------------------


def is_stale(report: SimilarityReport, now: dt.datetime | None = None) -> bool:
    """Whether ``report`` is still queued or running long after anyone could be working on it."""
    now = now or timezone.now()
    return report.state in _IN_FLIGHT and report.created_at < now - dt.timedelta(seconds=STALE_AFTER_S)


def fail_stale_reports(assignment: Assignment, now: dt.datetime | None = None) -> int:
    """Mark the stale reports of ``assignment``'s course failed; how many.

    One conditional UPDATE: a report that finished meanwhile is no longer
    in flight and stays as it is.
    """
    now = now or timezone.now()
    cutoff = now - dt.timedelta(seconds=STALE_AFTER_S)
    return SimilarityReport.objects.filter(
        assignment__course_id=assignment.course_id, state__in=_IN_FLIGHT, created_at__lt=cutoff
    ).update(state=ReportState.FAILED, error=FAILED_STALE, finished_at=now)


def request_similarity_report(assignment: Assignment, rung: Rung, user: User, threshold: float = THRESHOLD_DEFAULT) -> SimilarityReport:
    """Queue a similarity report of ``rung`` in ``assignment`` (after commit).

    A report of the same assignment and rung still queued or running is the
    answer instead of a new one; stale ones are failed first. More than
    SIMILARITY_MAX_IN_FLIGHT_PER_COURSE in flight in the course refuse it
    (SimilarityRefused). The caller checked that ``user`` may view the
    course's reports and that ``rung`` is one of the assignment's.
    """
    with transaction.atomic():
        # One request per assignment at a time decides (PostgreSQL; SQLite's writer lock already does).
        Assignment.objects.select_for_update().filter(pk=assignment.pk).first()
        fail_stale_reports(assignment)
        in_flight = SimilarityReport.objects.filter(assignment__course_id=assignment.course_id, state__in=_IN_FLIGHT)
        same = in_flight.filter(assignment=assignment, rung=rung).first()
        if same is not None:
            return same
        count = in_flight.count()
        if count >= SIMILARITY_MAX_IN_FLIGHT_PER_COURSE:
            raise SimilarityRefused(REFUSED_IN_FLIGHT.format(count=count))
        report = SimilarityReport.objects.create(assignment=assignment, rung=rung, threshold=threshold, created_by=user)
        lifecycle.enqueue_on_commit(_JOB, report.pk, QUEUE)
    return report


# --- Building (the task) ----------------------------------------------------


def _move(report_id: int, from_state: ReportState, to_state: ReportState, **fields: Any) -> bool:
    """One conditional UPDATE of the report's state; whether it was still in ``from_state``."""
    return SimilarityReport.objects.filter(pk=report_id, state=from_state).update(state=to_state, **fields) == 1


@outside_write_transaction
def build_similarity_report(report_id: int, *, budget_s: float = WORK_BUDGET_S) -> SimilarityReport | None:
    """Claim a queued report, compare its learners' code, store the pairs above its threshold.

    None when there was nothing to claim (a redelivered task, a report
    failed as stale meanwhile, or gone). Any failure of the comparison ends
    the report failed, with a sentence; the report is never left running by
    an error this function sees.
    """
    if not _move(report_id, ReportState.QUEUED, ReportState.RUNNING):
        log.info("similarity report %s already claimed, ended or gone; nothing to do", report_id)
        return None
    report = SimilarityReport.objects.select_related("assignment", "rung").get(pk=report_id)
    try:
        learners = latest_passing_submits(report.assignment, report.rung)
        pairs = compare_learners(learners, starters_of(report.rung, learners), report.threshold, stop_at=time.monotonic() + budget_s)
    except (_OutOfTime, SoftTimeLimitExceeded):
        _move(report_id, ReportState.RUNNING, ReportState.FAILED, error=FAILED_TOO_SLOW.format(seconds=round(budget_s)), finished_at=timezone.now())
    except Exception as exc:  # whatever broke, the report ends failed rather than stuck
        log.exception("similarity report %s failed", report_id)
        _move(report_id, ReportState.RUNNING, ReportState.FAILED, error=FAILED_OURS.format(kind=type(exc).__name__), finished_at=timezone.now())
    else:
        if not _move(report_id, ReportState.RUNNING, ReportState.DONE, pairs=pairs, compared=len(learners), finished_at=timezone.now()):
            log.warning("similarity report %s was ended meanwhile; its result is dropped", report_id)
    report.refresh_from_db()
    return report


def latest_passing_submits(assignment: Assignment, rung: Rung) -> list[Learner]:
    """Each learner of the course's latest passing Submit of ``rung``, the most recent SIMILARITY_MAX_LEARNERS."""
    learners = Membership.objects.filter(course_id=assignment.course_id, role=CourseRole.LEARNER).values("user_id")
    latest = list(
        _passing_submits(rung).filter(user_id__in=learners).values("user_id").annotate(last=Max("pk")).order_by("-last").values_list("last", flat=True)[
            :SIMILARITY_MAX_LEARNERS
        ]
    )
    rows = _passing_submits(rung).filter(pk__in=latest).order_by("pk").values_list("pk", "user_id", "rung_version_id", "code")
    return [Learner(pk, user_id, version_id, code[:SIMILARITY_MAX_CODE_CHARS]) for pk, user_id, version_id, code in rows]


def _passing_submits(rung: Rung) -> QuerySet[Submission]:
    return Submission.objects.filter(rung=rung, kind=Kind.SUBMIT, status=Status.DONE, outcome=Outcome.PASSED)


def starters_of(rung: Rung, learners: Iterable[Learner]) -> list[str]:
    """The starter code of every version ``learners`` submitted against, and of the current one."""
    version_ids = {learner.version_id for learner in learners}
    if rung.current_version_id:
        version_ids.add(rung.current_version_id)
    return sorted(set(RungVersion.objects.filter(pk__in=version_ids).values_list("starter_code", flat=True)))


def compare_learners(learners: list[Learner], starters: list[str], threshold: float, *, stop_at: float) -> list[dict[str, Any]]:
    """Every pair of ``learners`` whose score reaches ``threshold``, highest first, at most SIMILARITY_MAX_PAIRS.

    Each pair: the two submissions (``a`` the earlier), each side's share
    found in the other, and each side's matched character ranges.
    """
    import numpy as np
    from copydetect import CodeFingerprint, compare_files

    def fingerprint(code: str, boilerplate: Any) -> Any:
        # The file name is only copydetect's label; the language is forced.
        return CodeFingerprint("solution.py", NOISE_T, WINDOW, boilerplate, True, "python", fp=io.StringIO(code))

    boilerplate = np.unique(np.array([h for code in starters for h in fingerprint(code, None).hashes], dtype=np.int64))
    prints = []
    for learner in learners:
        _check_time(stop_at)
        prints.append(fingerprint(learner.code, boilerplate))
    pairs: list[dict[str, Any]] = []
    for i, first in enumerate(prints):
        _check_time(stop_at)
        if not first.hashes:
            continue
        for j in range(i + 1, len(prints)):
            second = prints[j]
            if not second.hashes or first.hashes.isdisjoint(second.hashes):
                continue
            overlap, (score_a, score_b), (slices_a, slices_b) = compare_files(first, second)
            score = max(float(score_a), float(score_b))
            if overlap < MIN_OVERLAP or score < threshold:
                continue
            pairs.append(
                {
                    "a": learners[i].submission_id,
                    "b": learners[j].submission_id,
                    "score": round(score, 4),
                    "score_a": round(min(1.0, float(score_a)), 4),
                    "score_b": round(min(1.0, float(score_b)), 4),
                    "ranges_a": _ranges(slices_a, len(learners[i].code)),
                    "ranges_b": _ranges(slices_b, len(learners[j].code)),
                }
            )
    pairs.sort(key=lambda pair: (-pair["score"], pair["a"], pair["b"]))
    return pairs[:SIMILARITY_MAX_PAIRS]


def _check_time(stop_at: float) -> None:
    if time.monotonic() > stop_at:
        raise _OutOfTime


def _ranges(slices: Any, length: int) -> list[list[int]]:
    """copydetect's slices (starts, ends in the unfiltered code) as sorted, clamped, merged [start, end) ranges."""
    if len(slices) != 2 or len(slices[0]) == 0:
        return []
    ranges: list[list[int]] = []
    for start, end in sorted(zip((int(s) for s in slices[0]), (int(e) for e in slices[1]), strict=True)):
        start, end = max(0, min(start, length)), max(0, min(end, length))
        if end <= start:
            continue
        if ranges and start <= ranges[-1][1]:
            ranges[-1][1] = max(ranges[-1][1], end)
        else:
            ranges.append([start, end])
    return ranges


# --- Showing ------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    text: str
    marked: bool


@dataclass(frozen=True)
class Line:
    number: int
    segments: list[Segment]


def marked_lines(code: str, ranges: list[list[int]], starter: str = "") -> list[Line]:
    """``code`` line by line, cut into segments marked where they fall in ``ranges``.

    A line that is also a line of ``starter`` is never marked: a matched
    run of fingerprints may begin in the starter code it continues.
    The text stays text: the template escapes it like any other value.
    """
    given = {line.strip() for line in starter.split("\n")} - {""}
    marks = bytearray(len(code))
    for start, end in ranges:
        start, end = max(0, start), min(len(code), end)
        if end > start:
            marks[start:end] = b"\x01" * (end - start)
    lines: list[Line] = []
    position = 0
    for number, text in enumerate(code.split("\n"), start=1):
        if text.strip() in given:
            marks[position : position + len(text)] = bytes(len(text))
        segments: list[Segment] = []
        run_start = 0
        for offset in range(1, len(text) + 1):
            if offset == len(text) or marks[position + offset] != marks[position + run_start]:
                segments.append(Segment(text[run_start:offset], bool(marks[position + run_start])))
                run_start = offset
        lines.append(Line(number, segments))
        position += len(text) + 1
    return lines


@dataclass(frozen=True)
class PairRow:
    """One pair of a report as the report page lists it."""

    number: int
    score: float
    score_a: float
    score_b: float
    submission_a: int
    submission_b: int
    learner_a: str
    learner_b: str


def shown_pairs(report: SimilarityReport) -> list[PairRow]:
    """The report's pairs whose two learners are both still learners of the course, highest first.

    ``number`` is the pair's place in the report (the pair page's address).
    """
    pairs = list(report.pairs or [])
    ids = {pair["a"] for pair in pairs} | {pair["b"] for pair in pairs}
    course_id = report.assignment.course_id
    learners = set(Membership.objects.filter(course_id=course_id, role=CourseRole.LEARNER).values_list("user_id", flat=True))
    who = {
        pk: username
        for pk, user_id, username in Submission.objects.filter(pk__in=ids).values_list("pk", "user_id", "user__username")
        if user_id in learners
    }
    return [
        PairRow(number, pair["score"], pair["score_a"], pair["score_b"], pair["a"], pair["b"], who[pair["a"]], who[pair["b"]])
        for number, pair in enumerate(pairs)
        if pair["a"] in who and pair["b"] in who
    ]


@dataclass(frozen=True)
class Side:
    """One side of a pair: the submission, its share found in the other, its code marked."""

    submission: Submission
    share: float
    lines: list[Line]


def pair_sides(report: SimilarityReport, number: int) -> tuple[PairRow, Side, Side] | None:
    """Pair ``number`` of ``report`` side by side; None when there is none, or one learner is no longer the course's."""
    row = next((row for row in shown_pairs(report) if row.number == number), None)
    if row is None:
        return None
    pair = report.pairs[number]
    submissions = Submission.objects.select_related("user", "rung_version").in_bulk([row.submission_a, row.submission_b])
    a, b = submissions[row.submission_a], submissions[row.submission_b]
    return (
        row,
        Side(a, row.score_a, marked_lines(a.code, pair["ranges_a"], a.rung_version.starter_code)),
        Side(b, row.score_b, marked_lines(b.code, pair["ranges_b"], b.rung_version.starter_code)),
    )
