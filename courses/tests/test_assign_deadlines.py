"""Assignments: the form's checks, dates typed in the course's time zone and stored in UTC, edit and delete,
extensions (a TA may not), and what a learner sees of their deadlines."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from courses.assignments import learner_deadlines, practice_submissions
from courses.models import Assignment, AssignmentRung, Extension
from grader import messages

from .setup_world import SetupWorld, build_setup_world, finished_submit

pytestmark = pytest.mark.django_db

DAY = dt.timedelta(days=1)


@pytest.fixture
def world() -> SetupWorld:
    return build_setup_world()


def _form(world: SetupWorld, **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "title": "Week 1",
        "rungs": [world.rungs["s-2"].pk, world.rungs["s-1"].pk],
        "opens_at": "2027-01-10T09:00",
        "due_at": "2027-01-17T23:59",
        "late_policy": "closed",
        "hard_close_at": "",
        "late_factor": "",
    }
    data.update(overrides)
    return data


def test_a_teacher_creates_an_assignment_with_dates_in_the_course_time_zone(world: SetupWorld) -> None:
    response = world.client("teacher").post(reverse("courses:assignment-new", args=["paris-101"]), _form(world))
    assert response.status_code == 302
    assignment = Assignment.objects.get(course=world.course)
    assert response["Location"] == reverse("courses:assignment", args=["paris-101", assignment.pk])
    # Paris is UTC+1 in January: 09:00 there is 08:00 UTC.
    assert assignment.opens_at == dt.datetime(2027, 1, 10, 8, 0, tzinfo=dt.UTC)
    assert assignment.due_at == dt.datetime(2027, 1, 17, 22, 59, tzinfo=dt.UTC)
    # The course's order, whatever order the boxes came in.
    assert [link.rung.slug for link in AssignmentRung.objects.filter(assignment=assignment)] == ["s-1", "s-2"]
    page = world.client("teacher").get(reverse("courses:assignment", args=["paris-101", assignment.pk])).content.decode()
    assert "Sun 17 Jan 2027, 23:59 CET" in page


def test_a_penalty_assignment_stores_its_hard_close_and_factor(world: SetupWorld) -> None:
    form = _form(world, late_policy="penalty", hard_close_at="2027-07-20T12:00", due_at="2027-07-17T12:00", late_factor="0.5")
    assert world.client("owner").post(reverse("courses:assignment-new", args=["paris-101"]), form).status_code == 302
    assignment = Assignment.objects.get(course=world.course)
    assert assignment.hard_close_at == dt.datetime(2027, 7, 20, 10, 0, tzinfo=dt.UTC)  # CEST, UTC+2
    assert assignment.late_factor == 0.5


@pytest.mark.parametrize(
    ("overrides", "field", "fragment"),
    [
        ({"due_at": "2027-01-10T09:00"}, "due_at", "after the open date"),
        ({"due_at": "2027-01-01T09:00"}, "due_at", "after the open date"),
        ({"late_policy": "penalty", "late_factor": "0.5"}, "hard_close_at", "needs a hard close"),
        ({"late_policy": "penalty", "hard_close_at": "2027-01-17T23:00", "late_factor": "0.5"}, "hard_close_at", "after the due date"),
        ({"late_policy": "penalty", "hard_close_at": "2027-01-20T23:00", "late_factor": "1.5"}, "late_factor", "1"),
        ({"late_policy": "penalty", "hard_close_at": "2027-01-20T23:00"}, "late_factor", "from 0 to 1"),
        ({"rungs": []}, "rungs", "required"),
        ({"opens_at": "2027-03-28T02:30"}, "opens_at", "interpreted"),  # a time Paris skips (DST)
        ({"opens_at": "tomorrow"}, "opens_at", "valid"),
    ],
)
def test_the_assignment_form_refuses_bad_dates_and_policies(
    world: SetupWorld, overrides: dict[str, Any], field: str, fragment: str
) -> None:
    response = world.client("teacher").post(reverse("courses:assignment-new", args=["paris-101"]), _form(world, **overrides))
    assert response.status_code == 400
    assert fragment in " ".join(response.context["form"].errors[field])
    assert not Assignment.objects.exists()


def test_a_rung_the_course_does_not_use_is_refused(world: SetupWorld) -> None:
    response = world.client("teacher").post(
        reverse("courses:assignment-new", args=["paris-101"]), _form(world, rungs=[world.rungs["o-1"].pk])
    )
    assert response.status_code == 400 and "rungs" in response.context["form"].errors
    assert not Assignment.objects.exists()


def test_a_ta_and_a_learner_may_not_set_assignments(world: SetupWorld) -> None:
    for name in ("ta", "learner"):
        assert world.client(name).post(reverse("courses:assignment-new", args=["paris-101"]), _form(world)).status_code == 403
    assert world.client("stranger").get(reverse("courses:assignment-new", args=["paris-101"])).status_code == 404
    assert not Assignment.objects.exists()


def test_the_owner_edits_and_deletes_an_assignment(world: SetupWorld) -> None:
    assignment = world.assignment(opens=-DAY, due=DAY, rungs=("s-1", "s-2"))
    owner = world.client("owner")
    edit = reverse("courses:assignment-edit", args=["paris-101", assignment.pk])
    form_page = owner.get(edit)
    assert form_page.status_code == 200 and form_page.context["form"].initial["rungs"] == [
        str(world.rungs["s-1"].pk),
        str(world.rungs["s-2"].pk),
    ]
    assert owner.post(edit, _form(world, title="Week one", rungs=[world.rungs["s-2"].pk])).status_code == 302
    assignment.refresh_from_db()
    assert assignment.title == "Week one"
    assert list(AssignmentRung.objects.filter(assignment=assignment).values_list("rung__slug", flat=True)) == ["s-2"]
    assert owner.post(reverse("courses:assignment-delete", args=["paris-101", assignment.pk])).status_code == 302
    assert not Assignment.objects.exists()
    assert owner.get(edit).status_code == 404


# ---- Extensions ----


def test_a_teacher_grants_an_extension_a_ta_may_not(world: SetupWorld) -> None:
    assignment = world.assignment(opens=-DAY, due=DAY, rungs=("s-1",))
    url = reverse("courses:extension-grant", args=["paris-101", assignment.pk])
    form = {"learner": world.users["learner"].pk, "due_at": "2099-01-01T12:00"}
    assert world.client("ta").post(url, form).status_code == 403
    assert world.client("learner").post(url, form).status_code == 403
    assert not Extension.objects.exists()
    assert world.client("teacher").post(url, form).status_code == 302
    extension = Extension.objects.get(assignment=assignment)
    assert (extension.learner, extension.due_at, extension.granted_by) == (
        world.users["learner"],
        dt.datetime(2099, 1, 1, 11, 0, tzinfo=dt.UTC),
        world.users["teacher"],
    )
    # The TA sees the assignment page and its extensions, without the form.
    page = world.client("ta").get(reverse("courses:assignment", args=["paris-101", assignment.pk])).content.decode()
    assert 'data-user="learner"' in page and 'id="extension-form"' not in page
    assert (
        world.client("ta")
        .post(reverse("courses:extension-remove", args=["paris-101", assignment.pk, world.users["learner"].pk]))
        .status_code
        == 403
    )
    assert (
        world.client("teacher")
        .post(reverse("courses:extension-remove", args=["paris-101", assignment.pk, world.users["learner"].pk]))
        .status_code
        == 302
    )
    assert not Extension.objects.exists()


def test_an_extension_is_for_a_learner_of_the_course_after_the_open_date(world: SetupWorld) -> None:
    assignment = world.assignment(opens=-DAY, due=DAY)
    url = reverse("courses:extension-grant", args=["paris-101", assignment.pk])
    teacher = world.client("teacher")
    for form, field in (
        ({"learner": world.users["stranger"].pk, "due_at": "2099-01-01T12:00"}, "learner"),
        ({"learner": world.users["ta"].pk, "due_at": "2099-01-01T12:00"}, "learner"),
        ({"learner": world.users["learner"].pk, "due_at": "2001-01-01T12:00"}, "due_at"),
    ):
        response = teacher.post(url, form)
        assert response.status_code == 400 and field in response.context["form"].errors
    assert not Extension.objects.exists()


# ---- What a learner sees ----


def test_a_learners_deadlines_read_in_the_course_time_zone_with_the_extension_applied(world: SetupWorld) -> None:
    now = timezone.now()
    assignment = world.assignment(opens=-DAY, due=DAY, rungs=("s-1",))
    Assignment.objects.filter(pk=assignment.pk).update(due_at=dt.datetime(2099, 1, 15, 22, 59, tzinfo=dt.UTC))
    (entry,) = learner_deadlines(world.users["learner"], [world.rungs["s-1"].pk], now=now)
    assert entry.state == "open" and entry.sentence == "Due Thu 15 Jan 2099, 23:59 CET" and not entry.extended
    Extension.objects.create(assignment=assignment, learner=world.users["learner"], due_at=dt.datetime(2099, 7, 1, 10, 0, tzinfo=dt.UTC))
    (entry,) = learner_deadlines(world.users["learner"], [world.rungs["s-1"].pk], now=now)
    assert entry.extended and entry.sentence == f"Due Wed 01 Jul 2099, 12:00 CEST · {messages.DEADLINE_EXTENDED}"
    # Only the learner's own: staff and strangers have no deadlines, nor do rungs the assignment lacks.
    assert learner_deadlines(world.users["teacher"], [world.rungs["s-1"].pk]) == []
    assert learner_deadlines(world.users["learner"], [world.rungs["s-2"].pk]) == []


def test_the_learners_course_page_shows_each_assignments_state(world: SetupWorld) -> None:
    world.assignment(opens=-3 * DAY, due=-2 * DAY, hard_close=2 * DAY, factor=0.25, title="Late one")
    world.assignment(opens=-3 * DAY, due=-2 * DAY, title="Closed one")
    world.assignment(opens=DAY, due=2 * DAY, title="Future one")
    finished_submit(world.users["learner"], world.rungs["s-1"], timezone.now() - 2.5 * DAY)
    from grader.models import Progress

    Progress.objects.create(
        user=world.users["learner"], rung=world.rungs["s-1"], attempts=1, best_outcome="passed", solved_at=timezone.now() - 2.5 * DAY
    )
    html = world.client("learner").get(reverse("courses:course", args=["paris-101"])).content.decode()
    assert "Past due: late work counts 25% until" in html
    assert "Closed on" in html and "Opens" in html
    assert html.count(messages.PASS_STANDING["on_time"]) == 3  # solved before each due date: it counts (an early pass too)


def test_after_close_submits_are_practice_and_others_are_not(world: SetupWorld) -> None:
    learner, rung = world.users["learner"], world.rungs["s-1"]
    now = timezone.now()
    assignment = world.assignment(opens=-3 * DAY, due=-2 * DAY, hard_close=-DAY, rungs=("s-1",))
    on_time = finished_submit(learner, rung, now - 2.5 * DAY)
    late = finished_submit(learner, rung, now - 1.5 * DAY)
    after = finished_submit(learner, rung, now - dt.timedelta(hours=1))
    submissions = [on_time, late, after]
    assert practice_submissions(learner, rung, submissions) == {after.pk}
    # Sent before the close and graded after it (a queue at the deadline): it counts, as Progress.solved_at does.
    rushed = finished_submit(learner, rung, now - DAY - dt.timedelta(seconds=5), graded_after=dt.timedelta(minutes=3))
    assert practice_submissions(learner, rung, [rushed]) == set()
    # An extension moves the close for that learner only.
    Extension.objects.create(assignment=assignment, learner=learner, due_at=now + DAY)
    assert practice_submissions(learner, rung, submissions) == set()
    # Someone the course does not assign the rung to practises nothing.
    assert practice_submissions(world.users["learner2"], rung, [finished_submit(world.users["learner2"], rung, now)]) == set()
