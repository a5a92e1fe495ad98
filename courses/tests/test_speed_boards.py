"""A speed rung's board for a course's staff (issue 60, item 7): the course's learners only, by username; no one else sees it."""

from __future__ import annotations

import pytest

from grader.models import SpeedStanding

from .tools_world import World, attempt, build_world, client_for

pytestmark = pytest.mark.django_db

URL = "/courses/course-a/rungs/ta-1/speed/"


@pytest.fixture
def world() -> World:
    world = build_world()
    version = world.rungs["ta-1"].current_version
    assert version is not None
    version.speed = {"entry": "f", "min_ratio": 1.5, "section": {"entry": "f"}}
    version.save(update_fields=["speed"])
    rung = world.rungs["ta-1"]
    for name, ratio in (("learner_a", 3.0), ("learner_a2", 2.0), ("learner_b", 9.0)):
        user = world.users[name]
        best = attempt(user, rung, "fast", outcome="passed")
        SpeedStanding.objects.create(user=user, rung=rung, machine="Test CPU", best_ratio=ratio, best_submission=best, best_at=best.enqueued_at)
    return world


def test_staff_see_their_course_learners_by_username_best_first(world: World) -> None:
    page = client_for(world, "ta_a").get(URL)
    assert page.status_code == 200
    text = page.content.decode()
    assert text.index("learner_a<") < text.index("learner_a2<") and "3.00x" in text and "On Test CPU: 2 learners" in text
    assert "learner_b" not in text and "9.00x" not in text  # course B's learner


@pytest.mark.parametrize(("name", "status"), [("learner_a", 403), ("learner_b", 404), ("teacher_b", 404), ("stranger", 404)])
def test_learners_and_other_courses_staff_are_refused(world: World, name: str, status: int) -> None:
    assert client_for(world, name).get(URL).status_code == status


def test_a_rung_outside_the_course_is_not_found(world: World) -> None:
    assert client_for(world, "teacher_a").get("/courses/course-a/rungs/tb-1/speed/").status_code == 404
