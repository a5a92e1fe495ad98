"""The gradebook's counting: on time, late with a penalty, after the close, extensions, hints before the first pass, and a bounded number of queries."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from aids.models import HintReveal
from courses.constants import CourseRole, EnrolSource, LatePolicy
from courses.deadlines import Timing
from courses.gradebook import build_gradebook, counted_score, course_columns, iter_learner_chunks, learner_attempts
from courses.membership import enrol
from courses.models import Assignment, AssignmentRung, Course, Extension
from exercises.models import Module, Rung, RungVersion, Track
from grader.constants import Kind, Outcome, Status
from grader.models import Progress, Submission

pytestmark = pytest.mark.django_db

DUE = dt.datetime(2027, 3, 1, 12, 0, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)


def make_rungs(count: int, prefix: str = "gb") -> list[Rung]:
    """Synthetic catalog rungs (no sandbox needed: the gradebook reads progress, never grades)."""
    track, _ = Track.objects.get_or_create(slug="gb-track", defaults={"title": "Track"})
    module, _ = Module.objects.get_or_create(slug=f"{prefix}-module", defaults={"track": track, "title": "Module"})
    rungs = []
    for index in range(count):
        rung = Rung.objects.create(module=module, slug=f"{prefix}-rung-{index}", order=index)
        version = RungVersion.objects.create(
            rung=rung, number=1, content_hash=f"{prefix}{index}", title=f"Rung {index}", minutes=5, difficulty="easy",
            instructions_md="", starter_code="", reference_code="", visible_tests="", hidden_tests="",
        )
        Rung.objects.filter(pk=rung.pk).update(current_version=version)
        rungs.append(rung)
    return rungs


def make_course(slug: str = "gb-course") -> Course:
    return Course.objects.create(slug=slug, title="Gradebook course")


def make_assignment(course: Course, rungs: list[Rung], **fields: Any) -> Assignment:
    fields = {"title": "A1", "opens_at": DUE - 48 * HOUR, "due_at": DUE, **fields}
    assignment = Assignment.objects.create(course=course, **fields)
    for order, rung in enumerate(rungs):
        AssignmentRung.objects.create(assignment=assignment, rung=rung, order=order)
    return assignment


def solve(user: Any, rung: Rung, at: dt.datetime | None, attempts: int = 1) -> None:
    Progress.objects.create(user=user, rung=rung, attempts=attempts, best_outcome=Outcome.PASSED if at else Outcome.FAILED, solved_at=at)


def reveal(user: Any, rung: Rung, number: int, at: dt.datetime) -> None:
    reveal = HintReveal.objects.create(learner=user, rung=rung, number=number)
    HintReveal.objects.filter(pk=reveal.pk).update(revealed_at=at)


@pytest.fixture
def course() -> Course:
    return make_course()


@pytest.fixture
def rungs() -> list[Rung]:
    return make_rungs(2)


@pytest.fixture
def enrolled(course: Course, learner: Any) -> Any:
    enrol(course, learner, CourseRole.LEARNER, EnrolSource.LINK)
    return learner


def only_result(course: Course) -> Any:
    return build_gradebook(course).rows[0].results[0]


def test_a_pass_by_the_due_date_counts_in_full(course: Course, rungs: list[Rung], enrolled: Any) -> None:
    make_assignment(course, rungs)
    solve(enrolled, rungs[0], DUE - HOUR, attempts=3)
    solve(enrolled, rungs[1], DUE)
    result = only_result(course)
    assert result.score == 1.0
    assert result.timing is Timing.ON_TIME
    assert result.solved_at == DUE
    assert result.attempts == 4
    assert counted_score(course, enrolled) == 1.0


def test_a_pass_before_the_open_date_counts(course: Course, rungs: list[Rung], enrolled: Any) -> None:
    make_assignment(course, rungs[:1])
    solve(enrolled, rungs[0], DUE - 100 * HOUR)
    assert only_result(course).score == 1.0


def test_a_late_pass_counts_the_penalty_factor(course: Course, rungs: list[Rung], enrolled: Any) -> None:
    make_assignment(course, rungs, late_policy=LatePolicy.PENALTY, hard_close_at=DUE + 24 * HOUR, late_factor=0.5)
    solve(enrolled, rungs[0], DUE - HOUR)
    solve(enrolled, rungs[1], DUE + HOUR)
    result = only_result(course)
    assert [each.timing for each in result.rungs] == [Timing.ON_TIME, Timing.LATE]
    assert result.timing is Timing.LATE
    assert result.score == pytest.approx(0.75)
    assert counted_score(course, enrolled) == pytest.approx(0.75)


def test_a_pass_after_the_close_is_practice_and_not_counted(course: Course, rungs: list[Rung], enrolled: Any) -> None:
    make_assignment(course, rungs[:1], late_policy=LatePolicy.PENALTY, hard_close_at=DUE + 24 * HOUR, late_factor=0.5)
    make_assignment(course, rungs[1:], title="closed at the due date")
    solve(enrolled, rungs[0], DUE + 25 * HOUR)
    solve(enrolled, rungs[1], DUE + HOUR)
    results = build_gradebook(course).rows[0].results
    assert [each.timing for each in results] == [Timing.AFTER_CLOSE, Timing.AFTER_CLOSE]
    assert [each.score for each in results] == [0.0, 0.0]
    assert not results[0].rungs[0].counted
    assert counted_score(course, enrolled) == 0.0


def test_an_extension_moves_the_due_date_of_that_learner_only(course: Course, rungs: list[Rung], enrolled: Any, other_learner: Any) -> None:
    assignment = make_assignment(course, rungs[:1])
    enrol(course, other_learner, CourseRole.LEARNER, EnrolSource.LINK)
    Extension.objects.create(assignment=assignment, learner=enrolled, due_at=DUE + 48 * HOUR)
    for user in (enrolled, other_learner):
        solve(user, rungs[0], DUE + 24 * HOUR)
    rows = {row.username: row.results[0] for row in build_gradebook(course).rows}
    assert (rows["lena"].timing, rows["lena"].score, rows["lena"].extended) == (Timing.ON_TIME, 1.0, True)
    assert (rows["omar"].timing, rows["omar"].score, rows["omar"].extended) == (Timing.AFTER_CLOSE, 0.0, False)
    assert counted_score(course, enrolled) == 1.0
    assert counted_score(course, other_learner) == 0.0


def test_hints_count_when_revealed_before_the_first_pass(course: Course, rungs: list[Rung], enrolled: Any) -> None:
    make_assignment(course, rungs)
    solve(enrolled, rungs[0], DUE - 10 * HOUR)
    reveal(enrolled, rungs[0], 1, DUE - 12 * HOUR)
    reveal(enrolled, rungs[0], 2, DUE - 9 * HOUR)  # after the pass: not used for it
    # Unsolved: every reveal counts.
    reveal(enrolled, rungs[1], 1, DUE - 12 * HOUR)
    reveal(enrolled, rungs[1], 2, DUE + 12 * HOUR)
    result = only_result(course)
    assert [each.hints for each in result.rungs] == [1, 2]
    assert result.hints == 3


def test_the_course_score_is_the_mean_over_assignments(course: Course, rungs: list[Rung], enrolled: Any) -> None:
    make_assignment(course, rungs[:1])
    make_assignment(course, rungs[1:], title="A2")
    make_assignment(course, [], title="no rungs yet")
    solve(enrolled, rungs[0], DUE)
    assert counted_score(course, enrolled) == 0.5


def test_a_course_without_assignments_scores_zero(course: Course, enrolled: Any) -> None:
    assert counted_score(course, enrolled) == 0.0
    assert build_gradebook(course).rows[0].results == ()


def test_only_the_course_learners_are_rows(course: Course, rungs: list[Rung], enrolled: Any, other_learner: Any, instructor: Any) -> None:
    make_assignment(course, rungs)
    enrol(course, instructor, CourseRole.TEACHER, EnrolSource.STAFF)
    enrol(make_course("elsewhere"), other_learner, CourseRole.LEARNER, EnrolSource.LINK)
    assert [row.username for row in build_gradebook(course).rows] == ["lena"]


def test_attempts_are_timed_against_the_learners_deadlines(course: Course, rungs: list[Rung], enrolled: Any) -> None:
    assignment = make_assignment(course, rungs[:1], late_policy=LatePolicy.PENALTY, hard_close_at=DUE + 24 * HOUR, late_factor=0.5)
    version = rungs[0].versions.get()
    for outcome, at in ((Outcome.FAILED, DUE - HOUR), (Outcome.PASSED, DUE + HOUR), (Outcome.PASSED, DUE + 30 * HOUR)):
        Submission.objects.create(user=enrolled, rung=rungs[0], rung_version=version, kind=Kind.SUBMIT, code="x",
                                  status=Status.DONE, outcome=outcome, finished_at=at)
    Submission.objects.create(user=enrolled, rung=rungs[0], rung_version=version, kind=Kind.RUN, code="x", status=Status.DONE)
    _, attempts = learner_attempts(assignment, rungs[0], enrolled.pk)
    assert [(each.timing, each.first_pass) for each in attempts] == [
        (Timing.ON_TIME, False), (Timing.LATE, True), (Timing.AFTER_CLOSE, False)]


def _queries_for_a_page(course: Course, learners: int, django_user_model: Any, rungs: list[Rung]) -> int:
    for index in range(learners):
        user = django_user_model.objects.create_user(username=f"q{learners}-{index}")
        enrol(course, user, CourseRole.LEARNER, EnrolSource.LINK)
        solve(user, rungs[index % len(rungs)], DUE - HOUR)
        reveal(user, rungs[0], 1, DUE - 2 * HOUR)
    with CaptureQueriesContext(connection) as captured:
        gradebook = build_gradebook(course)
        assert len(gradebook.rows) == learners
    return len(captured)


def test_the_number_of_queries_does_not_grow_with_learners_or_assignments(django_user_model: Any) -> None:
    small, large = make_course("small"), make_course("large")
    few, many = make_rungs(2, "few"), make_rungs(6, "many")
    make_assignment(small, few)
    for index in range(3):
        make_assignment(large, many[2 * index:2 * index + 2], title=f"A{index}")
    assert _queries_for_a_page(small, 2, django_user_model, few) == _queries_for_a_page(large, 6, django_user_model, many) <= 7


def test_every_learner_comes_out_once_in_chunks(course: Course, rungs: list[Rung], django_user_model: Any) -> None:
    make_assignment(course, rungs)
    for index in range(5):
        enrol(course, django_user_model.objects.create_user(username=f"c{index}"), CourseRole.LEARNER, EnrolSource.LINK)
    chunks = list(iter_learner_chunks(course, course_columns(course), chunk_size=2))
    assert [[row.username for row in chunk] for chunk in chunks] == [["c0", "c1"], ["c2", "c3"], ["c4"]]
