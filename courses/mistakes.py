"""Common mistakes on a rung in a course: the hidden tests its learners fail
most, counted in learners (not attempts), each with a few example attempts.

Only the test's name and its author's description are shown: the hidden
tests' source, their generated inputs and the harness's assertion text
(``SubmissionTestResult.detail``) stay with the rung's content roles.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, QuerySet

from exercises.models import RungVersion
from grader.constants import CaseOutcome, Kind, Status
from grader.models import Submission, SubmissionTestResult

from .constants import CourseRole
from .models import Course, Membership

MISTAKES_SHOWN = 10
EXAMPLES_PER_MISTAKE = 3
# Example attempts are picked from this many of the newest failing ones (distinct learners first).
EXAMPLE_POOL = 30
# A test that did not pass; a skipped test said nothing about the code.
FAILING = (CaseOutcome.FAILED, CaseOutcome.ERROR, CaseOutcome.TIMEOUT)


@dataclass(frozen=True)
class Example:
    submission_id: int
    learner: str


@dataclass(frozen=True)
class Mistake:
    test_name: str
    description: str
    learners: int  # distinct learners of the course with at least one Submit failing it
    examples: list[Example]


@dataclass(frozen=True)
class RungMistakes:
    mistakes: list[Mistake]
    submitters: int  # distinct learners of the course with at least one graded Submit of the rung


def _learner_submits(course: Course, rung_id: int) -> QuerySet[Submission]:
    learners = Membership.objects.filter(course=course, role=CourseRole.LEARNER).values("user_id")
    return Submission.objects.filter(rung_id=rung_id, kind=Kind.SUBMIT, status=Status.DONE, user_id__in=learners)


def common_mistakes(course: Course, rung_id: int, *, shown: int = MISTAKES_SHOWN) -> RungMistakes:
    """The hidden tests of rung ``rung_id`` failed by most of ``course``'s learners, most first.

    The caller has checked the role and that the rung is the course's. A
    bounded number of queries: one count, one ranking, one per mistake shown
    for its examples, one for the descriptions.
    """
    submits = _learner_submits(course, rung_id)
    submitters = submits.values("user_id").distinct().count()
    failing = SubmissionTestResult.objects.filter(submission__in=submits.values("id"), hidden=True, outcome__in=FAILING)
    ranked = list(
        failing.values("name").annotate(learners=Count("submission__user_id", distinct=True)).order_by("-learners", "name")[:shown]
    )
    examples: dict[str, list[Example]] = {}
    versions: dict[str, int] = {}  # test name -> the newest version it failed in (for its description)
    for row in ranked:
        pool = failing.filter(name=row["name"]).order_by("-submission_id").values_list(
            "submission_id", "submission__user__username", "submission__rung_version_id"
        )[:EXAMPLE_POOL]
        picked: list[Example] = []
        seen: set[str] = set()
        for submission_id, username, version_id in pool:
            versions.setdefault(row["name"], version_id)
            if username not in seen and len(picked) < EXAMPLES_PER_MISTAKE:
                seen.add(username)
                picked.append(Example(submission_id=submission_id, learner=username))
        examples[row["name"]] = picked
    metas = {v.pk: v for v in RungVersion.objects.filter(pk__in=set(versions.values())).only("id", "hidden_test_meta")}
    mistakes = [
        Mistake(
            test_name=row["name"],
            description=metas[versions[row["name"]]].hidden_description(row["name"]) if versions.get(row["name"]) in metas else "",
            learners=row["learners"],
            examples=examples.get(row["name"], []),
        )
        for row in ranked
    ]
    return RungMistakes(mistakes=mistakes, submitters=submitters)
