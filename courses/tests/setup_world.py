"""A small world for the course setup, enrolment and assignment tests.

Two modules of synthetic published rungs (nothing here grades: no sandbox,
no shipped catalog), a course in Europe/Paris that uses the first module,
and its owner, teacher, TA and learner.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from courses.constants import CourseRole, EnrolSource, LatePolicy
from courses.membership import enrol
from courses.models import Assignment, AssignmentRung, Course
from exercises.models import Module, Rung, RungVersion, Track
from grader.constants import Kind, Status
from grader.models import Submission


def published_rung(module: Module, slug: str, order: int = 0) -> Rung:
    rung = Rung.objects.create(module=module, slug=slug, order=order)
    version = RungVersion.objects.create(
        rung=rung,
        number=1,
        content_hash=f"h-{slug}",
        title=f"Title of {slug}",
        minutes=5,
        difficulty="easy",
        instructions_md="Do it.",
        starter_code="def f():\n    pass\n",
        reference_code="def f():\n    return 1\n",
        visible_tests="",
        hidden_tests="def test_it():\n    assert f() == 1\n",
    )
    Rung.objects.filter(pk=rung.pk).update(current_version=version)
    rung.refresh_from_db()
    return rung


@dataclass
class SetupWorld:
    course: Course
    modules: list[Module]
    rungs: dict[str, Rung]
    users: dict[str, User]

    def client(self, name: str) -> Client:
        client = Client()
        client.force_login(self.users[name])
        return client

    def assignment(
        self,
        *,
        opens: dt.timedelta,
        due: dt.timedelta,
        rungs: tuple[str, ...] = ("s-1",),
        hard_close: dt.timedelta | None = None,
        factor: float = 0.5,
        title: str = "Week 1",
    ) -> Assignment:
        """An assignment of the course with dates relative to now (penalty policy when ``hard_close`` is given)."""
        now = timezone.now()
        assignment = Assignment.objects.create(
            course=self.course,
            title=title,
            opens_at=now + opens,
            due_at=now + due,
            late_policy=LatePolicy.PENALTY if hard_close is not None else LatePolicy.CLOSED,
            hard_close_at=now + hard_close if hard_close is not None else None,
            late_factor=factor if hard_close is not None else 1.0,
        )
        for order, slug in enumerate(rungs):
            AssignmentRung.objects.create(assignment=assignment, rung=self.rungs[slug], order=order)
        return assignment


def build_setup_world() -> SetupWorld:
    from core.roles import make_instructor

    track = Track.objects.create(slug="setup-track", title="Setup track")
    first = Module.objects.create(track=track, slug="setup-mod", title="Setup module", order=0)
    second = Module.objects.create(track=track, slug="other-mod", title="Other module", order=1)
    rungs = {"s-1": published_rung(first, "s-1", 0), "s-2": published_rung(first, "s-2", 1), "o-1": published_rung(second, "o-1", 0)}
    # No passwords: the tests log in with force_login, and hashing seven
    # passwords took seconds per test on a loaded machine.
    users = {
        name: User.objects.create(username=name, email=f"{name}@school.example")
        for name in ("owner", "teacher", "ta", "learner", "learner2", "stranger", "teacher2")
    }
    make_instructor(users["owner"])
    make_instructor(users["teacher2"])
    course = Course.objects.create(
        slug="paris-101", title="Paris 101", term="Spring 2027", time_zone="Europe/Paris", created_by=users["owner"]
    )
    course.modules.add(first)
    for name, role in (
        ("owner", CourseRole.OWNER),
        ("teacher", CourseRole.TEACHER),
        ("ta", CourseRole.TA),
        ("learner", CourseRole.LEARNER),
    ):
        enrol(course, users[name], role, EnrolSource.STAFF)
    return SetupWorld(course=course, modules=[first, second], rungs=rungs, users=users)


def finished_submit(
    user: User, rung: Rung, at: dt.datetime, outcome: str = "passed", graded_after: dt.timedelta = dt.timedelta(seconds=2)
) -> Submission:
    """A Submit sent at ``at`` (the time deadlines judge) and graded ``graded_after`` later."""
    assert rung.current_version is not None
    return Submission.objects.create(
        user=user,
        rung=rung,
        rung_version=rung.current_version,
        kind=Kind.SUBMIT,
        code="def f():\n    return 1\n",
        status=Status.DONE,
        outcome=outcome,
        enqueued_at=at,
        finished_at=at + graded_after,
    )
