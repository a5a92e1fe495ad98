"""Course staff see of a rung what a learner who solved it sees (issue 57): the reference and the hidden
tests' names and descriptions, for the rungs their course uses, without solving them; never the hidden
tests' source. A learner of the course, and staff of a course that does not use the rung, see it only
once they pass."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse

from courses.constants import CourseRole, EnrolSource
from courses.membership import enrol
from courses.models import Course

from .setup_world import SetupWorld, build_setup_world

pytestmark = pytest.mark.django_db

DAY = dt.timedelta(days=1)


@pytest.fixture
def world() -> SetupWorld:
    world = build_setup_world()
    other = Course.objects.create(slug="other-course", title="Other course")
    other.modules.add(world.modules[1])  # uses other-mod only
    enrol(other, world.users["teacher2"], CourseRole.TEACHER, EnrolSource.STAFF)
    return world


@pytest.mark.parametrize("name", ["owner", "teacher", "ta"])
def test_course_staff_open_the_reference_of_their_courses_rungs(world: SetupWorld, name: str) -> None:
    answer = world.client(name).get(reverse("rung-reference", args=["s-1"]))
    assert answer.status_code == 200
    body = answer.json()
    assert "return 1" in str(body)  # the reference
    assert "assert f() == 1" not in str(body)  # never a hidden test's source
    page = world.client(name).get(reverse("rung", args=["s-1"])).content.decode()
    assert 'data-reference-open="true"' in page and 'data-solved="false"' in page


@pytest.mark.parametrize(("name", "slug"), [("learner", "s-1"), ("teacher2", "s-1"), ("stranger", "s-1"), ("teacher", "o-1")])
def test_no_one_else_opens_it_before_a_pass(world: SetupWorld, name: str, slug: str) -> None:
    assert world.client(name).get(reverse("rung-reference", args=[slug])).status_code == 403
    page = world.client(name).get(reverse("rung", args=[slug])).content.decode()
    assert 'data-reference-open="false"' in page


def test_a_rung_of_an_assignment_opens_to_its_staff_too(world: SetupWorld) -> None:
    world.course.modules.clear()
    world.assignment(opens=-DAY, due=DAY, rungs=("o-1",))
    assert world.client("ta").get(reverse("rung-reference", args=["o-1"])).status_code == 200
    assert world.client("ta").get(reverse("rung-reference", args=["s-1"])).status_code == 403

