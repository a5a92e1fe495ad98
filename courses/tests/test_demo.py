"""The newcomer's demo (issue 57, item 7): `make run` makes a teacher, a demo course
with the demo learner in it and an assignment due in a week; again changes nothing;
production never gets any of it."""

from __future__ import annotations

import datetime as dt
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from core.roles import is_instructor
from core.types import User
from courses.constants import CourseRole, LatePolicy
from courses.demo import DEMO_ASSIGNMENT_RUNGS, DEMO_COURSE_SLUG
from courses.models import Assignment, Course, JoinLink, Membership
from courses.permissions import course_role

ROOT = Path(__file__).resolve().parents[2]


def _demo() -> str:
    out = StringIO()
    call_command("create_demo_users", stdout=out)
    return out.getvalue()


def test_make_run_makes_a_teacher_with_a_demo_course_the_demo_learner_and_an_assignment_due_in_a_week(catalog: Any) -> None:
    printed = _demo()
    assert "teacher / teacher-demo-pass (teacher, owns the Demo course)" in printed
    teacher, learner = User.objects.get(username="teacher"), User.objects.get(username="learner")
    assert teacher.check_password("teacher-demo-pass") and learner.check_password("learner-demo-pass")
    assert is_instructor(teacher) and not teacher.is_staff
    course = Course.objects.get(slug=DEMO_COURSE_SLUG)
    assert course.title == "Demo course"
    assert sorted(course.modules.values_list("slug", flat=True)) == ["inference-and-serving", "training-at-scale"]
    assert (course_role(teacher, course), course_role(learner, course)) == (CourseRole.OWNER, CourseRole.LEARNER)
    assignment = Assignment.objects.get(course=course)
    assert list(assignment.assignment_rungs.values_list("rung__slug", flat=True)) == list(DEMO_ASSIGNMENT_RUNGS)
    assert assignment.opens_at <= timezone.now()
    assert dt.timedelta(days=6, hours=22) < assignment.due_at - timezone.now() <= dt.timedelta(days=7)
    assert assignment.late_policy == LatePolicy.PENALTY and assignment.hard_close_at is not None


def test_running_it_again_duplicates_nothing_and_says_the_accounts_exist(catalog: Any) -> None:
    _demo()
    again = _demo()
    assert "teacher / teacher-demo-pass (teacher, owns the Demo course) (existing)" in again
    assert Course.objects.filter(slug=DEMO_COURSE_SLUG).count() == 1
    assert Assignment.objects.count() == 1
    assert Membership.objects.filter(course__slug=DEMO_COURSE_SLUG).count() == 2
    assert JoinLink.objects.filter(course__slug=DEMO_COURSE_SLUG, revoked_at=None, expires_at=None).count() == 1


def test_production_settings_refuse_the_demo_accounts(db: Any, settings: Any) -> None:
    settings.HTTPS_ONLY = True
    with pytest.raises(CommandError, match="never with HTTPS_ONLY"):
        _demo()
    assert not Course.objects.exists()
    assert not User.objects.exists()


def test_only_make_run_makes_the_demo_never_the_production_deployment() -> None:
    assert "manage.py create_demo_users" in (ROOT / "scripts" / "run.sh").read_text()
    for deployed in ("docker-compose.yml", "deploy/Dockerfile"):
        assert "create_demo" not in (ROOT / deployed).read_text()


def test_the_demo_teacher_and_learner_find_their_side_of_the_course(catalog: Any, client: Any) -> None:
    _demo()
    course = Course.objects.get(slug=DEMO_COURSE_SLUG)
    assignment = Assignment.objects.get(course=course)
    client.force_login(User.objects.get(username="teacher"))
    for name, args in (("courses:course", [course.slug]), ("courses:gradebook", [course.slug]), ("courses:tools", [course.slug]),
                       ("courses:assignment", [course.slug, assignment.pk])):
        assert client.get(reverse(name, args=args)).status_code == 200, name
    page = client.get(reverse("courses:course", args=[course.slug])).content.decode()
    assert "Week 1: memory arithmetic" in page and JoinLink.objects.get(course=course).code in page
    client.force_login(User.objects.get(username="learner"))
    page = client.get(reverse("courses:course", args=[course.slug])).content.decode()
    assert "Week 1: memory arithmetic" in page and "Size the KV cache" in page
