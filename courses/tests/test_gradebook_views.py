"""The gradebook pages and CSV: who may open them, what they show, the CSV streamed and safe in a spreadsheet."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from courses.constants import CourseRole, EnrolSource, LatePolicy
from courses.gradebook import stream_gradebook_csv
from courses.membership import enrol
from courses.models import Assignment, Course
from exercises.models import Rung
from grader.constants import Kind, Outcome, Status
from grader.models import Submission

from .test_gradebook import DUE, HOUR, make_assignment, make_course, make_rungs, solve

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(learner: Any) -> tuple[Course, Assignment, list[Rung]]:
    course = make_course()
    rungs = make_rungs(2)
    assignment = make_assignment(course, rungs, title="Week 1", late_policy=LatePolicy.PENALTY, hard_close_at=DUE + 24 * HOUR, late_factor=0.5)
    enrol(course, learner, CourseRole.LEARNER, EnrolSource.LINK)
    solve(learner, rungs[0], DUE + HOUR, attempts=2)
    return course, assignment, rungs


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def staff(course: Course, django_user_model: Any, role: CourseRole, name: str) -> Client:
    user = django_user_model.objects.create_user(username=name)
    enrol(course, user, role, EnrolSource.STAFF)
    return client_for(user)


def urls(course: Course, assignment: Assignment, rung: Rung, learner: Any) -> list[str]:
    return [
        reverse("courses:gradebook", args=[course.slug]),
        reverse("courses:gradebook-csv", args=[course.slug]),
        reverse("courses:gradebook-rung", args=[course.slug, assignment.pk, rung.slug]),
        reverse("courses:gradebook-attempts", args=[course.slug, assignment.pk, rung.slug, learner.pk]),
    ]


@pytest.mark.parametrize("role", [CourseRole.OWNER, CourseRole.TEACHER, CourseRole.TA])
def test_course_staff_open_every_gradebook_page(setup: Any, learner: Any, django_user_model: Any, role: CourseRole) -> None:
    course, assignment, rungs = setup
    client = staff(course, django_user_model, role, f"staff-{role}")
    for url in urls(course, assignment, rungs[0], learner):
        response = client.get(url)
        assert response.status_code == 200, url
        assert b"lena" in response.getvalue(), url


def test_a_learner_is_refused_and_other_courses_staff_learn_nothing(setup: Any, learner: Any, django_user_model: Any) -> None:
    course, assignment, rungs = setup
    other = make_course("other")
    teacher_elsewhere = staff(other, django_user_model, CourseRole.TEACHER, "teacher-elsewhere")
    for url in urls(course, assignment, rungs[0], learner):
        assert client_for(learner).get(url).status_code == 403, url
        assert teacher_elsewhere.get(url).status_code == 404, url
        assert Client().get(url).status_code == 302, url  # to the login page


def test_the_drill_downs_only_take_the_course_own_assignments_rungs_and_learners(
        setup: Any, learner: Any, other_learner: Any, django_user_model: Any) -> None:
    course, assignment, rungs = setup
    teacher = staff(course, django_user_model, CourseRole.TEACHER, "teacher")
    other = make_course("other")
    elsewhere = make_assignment(other, rungs, title="Not this course's")
    enrol(other, other_learner, CourseRole.LEARNER, EnrolSource.LINK)
    stray_rung = make_rungs(1, "stray")[0]
    assert teacher.get(reverse("courses:gradebook-rung", args=[course.slug, elsewhere.pk, rungs[0].slug])).status_code == 404
    assert teacher.get(reverse("courses:gradebook-rung", args=[course.slug, assignment.pk, stray_rung.slug])).status_code == 404
    for somebody in (other_learner, django_user_model.objects.get(username="teacher")):
        url = reverse("courses:gradebook-attempts", args=[course.slug, assignment.pk, rungs[0].slug, somebody.pk])
        assert teacher.get(url).status_code == 404


def test_the_page_shows_score_late_mark_attempts_and_drill_down_links(setup: Any, learner: Any, django_user_model: Any) -> None:
    course, assignment, rungs = setup
    page = staff(course, django_user_model, CourseRole.TA, "ta").get(reverse("courses:gradebook", args=[course.slug])).content.decode()
    assert "25%" in page  # one of two rungs, late: 0.5 / 2
    assert ">late<" in page
    assert "2 att." in page
    assert reverse("courses:gradebook-rung", args=[course.slug, assignment.pk, rungs[1].slug]) in page
    assert reverse("courses:timeline", args=[course.slug, learner.pk]) in page


def test_the_attempts_page_marks_the_counted_pass_and_links_each_submit(setup: Any, learner: Any, django_user_model: Any) -> None:
    course, assignment, rungs = setup
    version = rungs[0].versions.get()
    made = [Submission.objects.create(user=learner, rung=rungs[0], rung_version=version, kind=Kind.SUBMIT, code="x", status=Status.DONE,
                                      outcome=outcome, finished_at=DUE + HOUR) for outcome in (Outcome.FAILED, Outcome.PASSED)]
    url = reverse("courses:gradebook-attempts", args=[course.slug, assignment.pk, rungs[0].slug, learner.pk])
    page = staff(course, django_user_model, CourseRole.TEACHER, "teacher").get(url).content.decode()
    assert page.count("counted pass") == 1
    for submission in made:
        assert reverse("courses:feedback", args=[course.slug, submission.pk]) in page
    assert reverse("courses:timeline", args=[course.slug, learner.pk]) in page


def test_the_csv_streams_in_pieces_and_is_safe_in_a_spreadsheet(setup: Any, learner: Any, django_user_model: Any) -> None:
    course, assignment, _ = setup
    Assignment.objects.filter(pk=assignment.pk).update(title='=HYPERLINK("http://evil.example")')
    for name in ("=1+1", "+sum", "-x", "@cmd", "\tTab"):
        enrol(course, django_user_model.objects.create_user(username=name), CourseRole.LEARNER, EnrolSource.LINK)
    pieces = list(stream_gradebook_csv(course, chunk_size=2))
    assert len(pieces) == 1 + 3  # the header, then six learners two by two
    response = staff(course, django_user_model, CourseRole.TEACHER, "teacher").get(reverse("courses:gradebook-csv", args=[course.slug]))
    assert response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    rows = list(csv.reader(io.StringIO(response.getvalue().decode())))
    assert rows[0][2] == """'=HYPERLINK("http://evil.example"): score"""
    cells = [cell for row in rows for cell in row]
    assert not [cell for cell in cells if cell[:1] in ("=", "+", "-", "@", "\t")]
    assert {row[0] for row in rows[1:]} == {"'+sum", "'-x", "'=1+1", "'@cmd", "'\tTab", "lena"}
    lena = next(row for row in rows if row[0] == "lena")
    assert lena[1:6] == ["0.25", "0.25", "", "late", "2027-03-01T12:00:00+00:00"]
    assert lena[6:8] == ["2", "0"]
