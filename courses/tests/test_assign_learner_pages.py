"""What a learner sees of their course deadlines outside the course pages: the module page, the workspace,
and the workspace history's mark on a Submit after the close ("practice, not counted")."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from courses.models import Assignment, Extension
from grader import messages

from .setup_world import SetupWorld, build_setup_world, finished_submit

pytestmark = pytest.mark.django_db

DAY = dt.timedelta(days=1)
DUE = dt.datetime(2099, 1, 15, 22, 59, tzinfo=dt.UTC)  # 23:59 in Paris (CET)


@pytest.fixture
def world() -> SetupWorld:
    world = build_setup_world()
    assignment = world.assignment(opens=-DAY, due=DAY, rungs=("s-2",), title="Attention week")
    Assignment.objects.filter(pk=assignment.pk).update(due_at=DUE)
    return world


def test_the_module_page_shows_the_learners_deadline_in_the_course_time_zone(world: SetupWorld) -> None:
    html = world.client("learner").get(reverse("module", args=["setup-mod"])).content.decode()
    assert 'id="deadlines"' in html
    assert "Attention week" in html and "Paris 101" in html and "Due Thu 15 Jan 2099, 23:59 CET" in html


def test_the_workspace_shows_the_deadline_of_its_rung_only(world: SetupWorld) -> None:
    html = world.client("learner").get(reverse("rung", args=["s-2"])).content.decode()
    assert "Attention week" in html and "Due Thu 15 Jan 2099, 23:59 CET" in html
    assert 'id="deadlines"' not in world.client("learner").get(reverse("rung", args=["s-1"])).content.decode()


def test_an_extension_shows_as_applied(world: SetupWorld) -> None:
    assignment = Assignment.objects.get(title="Attention week")
    Extension.objects.create(assignment=assignment, learner=world.users["learner"], due_at=dt.datetime(2099, 7, 1, 10, 0, tzinfo=dt.UTC))
    html = world.client("learner").get(reverse("rung", args=["s-2"])).content.decode()
    assert "Due Wed 01 Jul 2099, 12:00 CEST" in html and messages.DEADLINE_EXTENDED in html


def test_no_deadlines_for_staff_others_or_visitors(world: SetupWorld) -> None:
    from django.test import Client

    for client in (world.client("teacher"), world.client("stranger"), Client()):
        assert 'id="deadlines"' not in client.get(reverse("module", args=["setup-mod"])).content.decode()


def test_a_submit_after_the_close_is_marked_practice_in_the_history(world: SetupWorld) -> None:
    now = timezone.now()
    Assignment.objects.filter(title="Attention week").update(opens_at=now - 3 * DAY, due_at=now - 2 * DAY)
    learner, rung = world.users["learner"], world.rungs["s-2"]
    before = finished_submit(learner, rung, now - 2.5 * DAY, outcome="failed")
    after = finished_submit(learner, rung, now - DAY)
    response = world.client("learner").get(reverse("rung-history", args=["s-2"]))
    marks = {attempt["id"]: attempt["practice"] for attempt in response.json()["attempts"]}
    assert marks == {after.pk: messages.PRACTICE_AFTER_CLOSE, before.pk: ""}
    # The workspace says the assignment is closed.
    html = world.client("learner").get(reverse("rung", args=["s-2"])).content.decode()
    assert escape("Closed on") in html and "practice, not counted" in html
