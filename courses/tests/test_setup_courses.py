"""Creating and running a course: who may create one, its form's checks, my courses, the course page, the owner's staff page."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from courses.constants import CourseRole, EnrolSource
from courses.models import Course, Membership

from .setup_world import SetupWorld, build_setup_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world() -> SetupWorld:
    return build_setup_world()


def _course_form(world: SetupWorld, **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "title": "Tokyo 201",
        "slug": "tokyo-201",
        "term": "Fall 2027",
        "time_zone": "Asia/Tokyo",
        "modules": [world.modules[0].pk],
    }
    data.update(overrides)
    return data


def test_a_teacher_account_creates_a_course_and_becomes_its_owner(world: SetupWorld) -> None:
    response = world.client("teacher2").post(reverse("courses:create"), _course_form(world, rungs=[world.rungs["o-1"].pk]))
    assert response.status_code == 302
    course = Course.objects.get(slug="tokyo-201")
    assert response["Location"] == reverse("courses:course", args=["tokyo-201"])
    assert (course.title, course.term, course.time_zone, course.created_by) == (
        "Tokyo 201",
        "Fall 2027",
        "Asia/Tokyo",
        world.users["teacher2"],
    )
    assert list(course.modules.all()) == [world.modules[0]] and list(course.rungs.all()) == [world.rungs["o-1"]]
    membership = Membership.objects.get(course=course)
    assert (membership.user, membership.role, membership.source) == (world.users["teacher2"], CourseRole.OWNER, EnrolSource.CREATED)


def test_an_admin_creates_a_course_too(world: SetupWorld, admin_user: Any) -> None:
    client = Client()
    client.force_login(admin_user)
    assert client.post(reverse("courses:create"), _course_form(world)).status_code == 302
    assert Membership.objects.get(course__slug="tokyo-201").role == CourseRole.OWNER


def test_a_learner_account_may_not_create_a_course(world: SetupWorld) -> None:
    client = world.client("learner")
    assert client.get(reverse("courses:create")).status_code == 403
    assert client.post(reverse("courses:create"), _course_form(world)).status_code == 403
    assert not Course.objects.filter(slug="tokyo-201").exists()
    assert "create-course" not in client.get(reverse("courses:home")).content.decode()


def test_anonymous_visitors_are_sent_to_log_in(world: SetupWorld) -> None:
    response = Client().get(reverse("courses:create"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize(
    ("overrides", "field", "fragment"),
    [
        ({"time_zone": "Mars/Olympus"}, "time_zone", "Not a time zone"),
        ({"time_zone": "../../etc/passwd"}, "time_zone", "Not a time zone"),
        ({"slug": "new"}, "slug", "choose another"),
        ({"slug": "join"}, "slug", "choose another"),
        ({"slug": "paris-101"}, "slug", "already exists"),
        ({"slug": "no spaces"}, "slug", "valid"),
    ],
)
def test_the_course_form_refuses_bad_details(world: SetupWorld, overrides: dict[str, Any], field: str, fragment: str) -> None:
    response = world.client("teacher2").post(reverse("courses:create"), _course_form(world, **overrides))
    assert response.status_code == 400
    assert fragment in " ".join(response.context["form"].errors[field])
    assert Course.objects.count() == 1


def test_a_course_uses_at_least_one_module_or_rung(world: SetupWorld) -> None:
    response = world.client("teacher2").post(reverse("courses:create"), _course_form(world, modules=[]))
    assert response.status_code == 400
    assert "at least one module or rung" in response.content.decode()


def test_my_courses_lists_each_course_under_the_users_role(world: SetupWorld) -> None:
    other = Course.objects.create(slug="other", title="Other course")
    Membership.objects.create(course=other, user=world.users["teacher"], role=CourseRole.LEARNER, source=EnrolSource.LINK)
    page = world.client("teacher").get(reverse("courses:home"))
    assert page.status_code == 200
    groups = {role: [course.slug for course in courses] for role, courses in page.context["groups"]}
    assert groups == {CourseRole.TEACHER: ["paris-101"], CourseRole.LEARNER: ["other"]}
    html = page.content.decode()
    assert "Courses you teach" in html and "Courses you take" in html


def test_a_user_in_no_course_is_told_how_to_join(world: SetupWorld) -> None:
    html = world.client("stranger").get(reverse("courses:home")).content.decode()
    assert 'id="no-courses"' in html and 'id="join-form"' in html


def test_the_course_page_is_a_404_to_a_stranger(world: SetupWorld) -> None:
    assert world.client("stranger").get(reverse("courses:course", args=["paris-101"])).status_code == 404
    assert world.client("stranger").get(reverse("courses:course", args=["no-such-course"])).status_code == 404


def test_staff_see_the_roster_assignments_and_links_learners_do_not(world: SetupWorld) -> None:
    world.assignment(opens=-_days(1), due=_days(6))
    staff_html = world.client("ta").get(reverse("courses:course", args=["paris-101"])).content.decode()
    for section in ('id="roster"', 'id="assignments"', 'id="links"', 'data-user="learner"'):
        assert section in staff_html
    assert reverse("courses:assignment-new", args=["paris-101"]) not in staff_html  # a TA sets no assignment
    learner_html = world.client("learner").get(reverse("courses:course", args=["paris-101"])).content.decode()
    assert 'id="my-assignments"' in learner_html and "Week 1" in learner_html
    for section in ('id="roster"', 'id="links"', 'data-user="ta"'):
        assert section not in learner_html


def test_only_the_owner_edits_the_course(world: SetupWorld) -> None:
    url = reverse("courses:edit", args=["paris-101"])
    form = _course_form(world, slug="paris-102", title="Paris 102", time_zone="America/New_York")
    assert world.client("teacher").post(url, form).status_code == 403
    assert world.client("learner").get(url).status_code == 403
    response = world.client("owner").post(url, form)
    assert response.status_code == 302 and response["Location"] == reverse("courses:course", args=["paris-102"])
    course = Course.objects.get(pk=world.course.pk)
    assert (course.slug, course.title, course.time_zone) == ("paris-102", "Paris 102", "America/New_York")


def test_the_owner_adds_changes_and_removes_staff(world: SetupWorld) -> None:
    owner = world.client("owner")
    staff_url = reverse("courses:staff", args=["paris-101"])
    assert owner.post(staff_url, {"username": "learner2", "role": "ta"}).status_code == 302
    learner2 = world.users["learner2"]
    assert Membership.objects.get(course=world.course, user=learner2).role == CourseRole.TA
    # A learner of the course is promoted by being added.
    assert owner.post(staff_url, {"username": "learner", "role": "teacher"}).status_code == 302
    assert Membership.objects.get(course=world.course, user=world.users["learner"]).role == CourseRole.TEACHER
    # Someone already staff is not re-added: the role is changed instead.
    refused = owner.post(staff_url, {"username": "ta", "role": "teacher"})
    assert refused.status_code == 400 and "change their role below" in refused.content.decode()
    assert (
        owner.post(reverse("courses:staff-role", args=["paris-101", learner2.pk]), {f"m{learner2.pk}-role": "teacher"}).status_code == 302
    )
    assert Membership.objects.get(course=world.course, user=learner2).role == CourseRole.TEACHER
    assert owner.post(reverse("courses:staff-remove", args=["paris-101", learner2.pk])).status_code == 302
    assert not Membership.objects.filter(course=world.course, user=learner2).exists()


def test_the_staff_page_refuses_unknown_users_and_never_touches_an_owner(world: SetupWorld) -> None:
    owner = world.client("owner")
    unknown = owner.post(reverse("courses:staff", args=["paris-101"]), {"username": "nobody", "role": "teacher"})
    assert unknown.status_code == 400 and "No account is nobody" in unknown.content.decode()
    owner_id = world.users["owner"].pk
    owner.post(reverse("courses:staff-role", args=["paris-101", owner_id]), {f"m{owner_id}-role": "ta"})
    owner.post(reverse("courses:staff-remove", args=["paris-101", owner_id]))
    assert Membership.objects.get(course=world.course, user_id=owner_id).role == CourseRole.OWNER
    # Nor a learner: "change role" is for staff.
    learner_id = world.users["learner"].pk
    owner.post(reverse("courses:staff-role", args=["paris-101", learner_id]), {f"m{learner_id}-role": "teacher"})
    assert Membership.objects.get(course=world.course, user_id=learner_id).role == CourseRole.LEARNER


def test_a_teacher_may_not_manage_staff(world: SetupWorld) -> None:
    teacher = world.client("teacher")
    assert teacher.get(reverse("courses:staff", args=["paris-101"])).status_code == 403
    ta_id = world.users["ta"].pk
    assert teacher.post(reverse("courses:staff-remove", args=["paris-101", ta_id])).status_code == 403
    assert Membership.objects.filter(course=world.course, user_id=ta_id).exists()


def _days(count: int) -> Any:
    import datetime as dt

    return dt.timedelta(days=count)


def test_a_refused_edit_leaves_the_page_on_the_course_itself(world: SetupWorld) -> None:
    Course.objects.create(slug="taken", title="Taken")
    response = world.client("owner").post(reverse("courses:edit", args=["paris-101"]), _course_form(world, slug="taken"))
    assert response.status_code == 400
    html = response.content.decode()
    assert reverse("courses:course", args=["paris-101"]) in html and reverse("courses:course", args=["taken"]) not in html
    assert Course.objects.get(pk=world.course.pk).slug == "paris-101"
