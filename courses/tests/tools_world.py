"""One small world for the teacher tools' tests: two courses on two modules, each with its staff and learners.

Course A uses module "ta-mod" (rungs ta-1, ta-2); course B uses "tb-mod" (tb-1).
"ta-out" is a rung of a third module neither course uses. Synthetic rungs:
nothing here grades, so no sandbox and no shipped catalog.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from courses.constants import CourseRole, EnrolSource
from courses.membership import enrol
from courses.models import Course
from exercises.models import Module, Rung, RungVersion, Track
from grader.constants import Kind, Status
from grader.models import Submission, SubmissionTestResult

from .setup_world import published_rung

# The hidden tests' source: a page that shows it would leak it.
HIDDEN_SOURCE_MARKER = "SECRET_HIDDEN_INPUT_4242"


def make_rung(module: Module, slug: str, order: int = 0) -> Rung:
    """setup_world's published rung, with hidden tests whose source is marked and two described hidden tests."""
    rung = published_rung(module, slug, order)
    RungVersion.objects.filter(rung=rung).update(
        hidden_tests=f"def test_edge():\n    assert f({HIDDEN_SOURCE_MARKER})\n",
        hidden_test_meta={"test_edge": {"description": "Handles the empty batch."}, "test_big": {"description": "Scales to 4k tokens."}},
    )
    rung.refresh_from_db()
    return rung


@dataclass
class World:
    course_a: Course
    course_b: Course
    rungs: dict[str, Rung]
    users: dict[str, User]


def build_world() -> World:
    track = Track.objects.create(slug="tools-track", title="Track")
    mod_a = Module.objects.create(track=track, slug="ta-mod", title="Module A")
    mod_b = Module.objects.create(track=track, slug="tb-mod", title="Module B")
    mod_out = Module.objects.create(track=track, slug="tout-mod", title="Module out")
    rungs = {"ta-1": make_rung(mod_a, "ta-1"), "ta-2": make_rung(mod_a, "ta-2", 1), "tb-1": make_rung(mod_b, "tb-1"), "ta-out": make_rung(mod_out, "ta-out")}
    course_a = Course.objects.create(slug="course-a", title="Course A")
    course_a.modules.add(mod_a)
    course_b = Course.objects.create(slug="course-b", title="Course B")
    course_b.modules.add(mod_b)
    users = {name: User.objects.create_user(username=name) for name in  # no password: tests force_login, and hashing one costs 0.5 s
             ("teacher_a", "ta_a", "learner_a", "learner_a2", "teacher_b", "learner_b", "stranger")}
    for name, course, role in (
        ("teacher_a", course_a, CourseRole.TEACHER), ("ta_a", course_a, CourseRole.TA), ("learner_a", course_a, CourseRole.LEARNER),
        ("learner_a2", course_a, CourseRole.LEARNER), ("teacher_b", course_b, CourseRole.TEACHER), ("learner_b", course_b, CourseRole.LEARNER),
    ):
        enrol(course, users[name], role, EnrolSource.STAFF)
    return World(course_a=course_a, course_b=course_b, rungs=rungs, users=users)


def attempt(user: User, rung: Rung, code: str, *, kind: str = Kind.SUBMIT, outcome: str = "failed", at: dt.datetime | None = None,
            results: dict[str, str] | None = None, hidden: bool = True) -> Submission:
    """A finished attempt with per-test results ({name: outcome})."""
    assert rung.current_version is not None
    fields: dict[str, Any] = {"enqueued_at": at} if at is not None else {}
    submission = Submission.objects.create(
        user=user, rung=rung, rung_version=rung.current_version, kind=kind, code=code, status=Status.DONE, outcome=outcome,
        finished_at=timezone.now(), **fields,
    )
    for order, (name, test_outcome) in enumerate((results or {}).items()):
        SubmissionTestResult.objects.create(
            submission=submission, order=order, name=name, outcome=test_outcome, hidden=hidden,
            message="Handles the empty batch." if hidden else "visible says hi", detail=f"assert f({HIDDEN_SOURCE_MARKER})",
        )
    return submission


def client_for(world: World, name: str) -> Client:
    """A test client logged in as the world's user ``name``."""
    client = Client()
    client.force_login(world.users[name])
    return client
