"""The authorization matrix (issue 57): every course and content endpoint, tried as each role.

Every URL pattern of the ``courses`` and ``authoring`` apps must have an entry
in ``MATRIX`` (a view added without one fails ``test_every_endpoint_has_an_entry``).
Each entry says which actors may use the endpoint; its test sends the request
as every actor, against course A's and module M's objects, and checks each
cell: a denial is a 403, a 404, or (anonymous) the login page or a 401; an
allowed call answers as the entry says (a page, a redirect to the right place,
a file). No response to an actor without a content role on the module ever
contains the hidden tests' source, a wrong solution, an alternative or a mutant.

Each request runs in a savepoint that is rolled back, so the actors all meet
the same objects; nothing reaches Celery (``apply_async`` and
``grader.lifecycle.enqueue`` are caught).

docs/courses.md holds the same matrix as a table, written from ``MATRIX``:
``test_the_docs_table_is_the_matrix`` fails when they differ, and
``UPDATE_DOCS=1 pytest courses/tests/test_authorization_matrix.py -k docs``
rewrites it.
"""

from __future__ import annotations

import copy
import datetime as dt
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import resolve_url
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from core.roles import make_instructor
from core.types import User
from courses.constants import CourseRole, EnrolSource, LatePolicy, ReportState
from courses.membership import enrol
from courses.models import Assignment, AssignmentRung, Course, Feedback, JoinLink, SimilarityReport
from exercises.models import Module, Rung, RungVersion, Track
from grader.constants import Kind, Outcome, Status
from grader.models import Rejudge, Submission

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "courses.md"
APPS = ("courses", "authoring")
# Pages outside those apps that issue 57 made or changed: an LMS course's roster and the notifications.
EXTRA = ("lti:course-roster", "lti:module-roster", "notifications")

# The actors, in the table's column order. Course A's owner, teacher, TA and
# learner; a teacher of course B (which uses the same module) trying course A's
# objects; an editor and a viewer of module M's content (no course role); a
# signed-in user with no role at all; and nobody signed in. The owner and the
# teachers are instructors (they may create courses), so an instructor's
# standing never stands in for a content role.
ACTORS = ("admin", "owner", "teacher", "ta", "learner", "teacher_b", "editor", "viewer", "stranger", "anonymous")
LABELS = {
    "admin": "admin", "owner": "owner A", "teacher": "teacher A", "ta": "TA A", "learner": "learner A",
    "teacher_b": "teacher B", "editor": "editor", "viewer": "viewer", "stranger": "stranger", "anonymous": "anonymous",
}

ADMIN = frozenset({"admin"})
OWNER_A = ADMIN | {"owner"}
TEACHERS_A = OWNER_A | {"teacher"}
STAFF_A = TEACHERS_A | {"ta"}
MEMBERS_A = STAFF_A | {"learner"}
EDITORS = ADMIN | {"editor"}
READERS = EDITORS | {"viewer"}
INSTRUCTORS = ADMIN | {"owner", "teacher", "teacher_b"}
SIGNED_IN = frozenset(ACTORS) - {"anonymous"}
# Signed in, no role in course A: its pages are a 404 to them, as if it did not exist.
OUTSIDERS_OF_A = frozenset({"teacher_b", "editor", "viewer", "stranger"})

# What a rung hides from everyone but its content roles: its hidden tests' source, its wrong
# solutions, its alternatives and its mutants (a Check's surviving ones, with their diffs).
HIDDEN_SOURCE = "assert solution.secret_edge_zq7() == 7"
WRONG_SOURCE = "def wrong_answer_zq7(): return 8"
ALTERNATIVE_SOURCE = "def alternative_zq7(): return 3 + 4"
MUTANT_SOURCE = "return 6  # mutant_zq7"
SECRETS = tuple(secret.encode() for secret in (HIDDEN_SOURCE, WRONG_SOURCE, ALTERNATIVE_SOURCE, MUTANT_SOURCE))
CONTENT_READERS = READERS


@dataclass
class World:
    """Course A and course B on module M, their people and their objects."""

    users: dict[str, User]
    learner_b: User
    module: Module
    rung: Rung
    version: RungVersion
    course_a: Course
    course_b: Course
    assignment_a: Assignment
    assignment_b: Assignment
    submission_a: Submission
    submission_b: Submission
    feedback_a: Feedback
    join_link_a: JoinLink
    similarity_a: SimilarityReport
    rejudge: Rejudge
    extra: dict[str, Any] = field(default_factory=dict)


Kwargs = Callable[[World], dict[str, Any]]
Check = Callable[[HttpResponse, World], bool]


@dataclass(frozen=True)
class Endpoint:
    """One URL pattern and method, who may use it, and what an allowed call answers."""

    name: str
    allowed: frozenset[str]
    kwargs: Kwargs = lambda world: {}
    method: str = "get"
    # The form sent (a GET's query).
    data: Callable[[World], dict[str, Any]] = lambda world: {}
    # The answers an allowed call may give.
    ok: frozenset[int] = frozenset({200})
    # And what must hold of it (a file's type, where a redirect goes).
    check: Check | None = None
    note: str = ""

    @property
    def id(self) -> str:
        return f"{self.method.upper()} {self.name}"


def _is_file(content_type: str) -> Check:
    return lambda response, world: response["Content-Type"].startswith(content_type)


def _course_a(world: World) -> dict[str, Any]:
    return {"slug": world.course_a.slug}


def _module(world: World) -> dict[str, Any]:
    return {"slug": world.module.slug}


def _rung(world: World) -> dict[str, Any]:
    return {"slug": world.module.slug, "rung": world.rung.slug}


# POSTs are sent with empty or bad data where a valid one would change much:
# the permission is decided before the form (house style), so an allowed
# actor gets the form's refusal (200 with errors, 400) or a redirect back.
POST_ANSWERS = frozenset({200, 302, 400})

def _course_a_with(**objects: Callable[[World], Any]) -> Kwargs:
    return lambda world: {"slug": world.course_a.slug, **{name: get(world) for name, get in objects.items()}}


def _pk(get: Callable[[World], Any]) -> Callable[[World], int]:
    return lambda world: int(get(world).pk)


def _user_pk(name: str) -> Callable[[World], int]:
    return lambda world: int(world.users[name].pk)


def _redirects_to(where: Callable[[World], str]) -> Check:
    return lambda response, world: response["Location"].split("#")[0] == where(world)


def _to_course_a(world: World) -> str:
    return reverse("courses:course", args=[world.course_a.slug])


ASSIGNMENT_A = _pk(lambda w: w.assignment_a)
ASSIGNMENT_B = _pk(lambda w: w.assignment_b)
RUNG = lambda world: world.rung.slug  # noqa: E731
LEARNER_A = _user_pk("learner")
LEARNER_B = lambda world: int(world.learner_b.pk)  # noqa: E731

MATRIX: tuple[Endpoint, ...] = (
    # --- courses: a course's own pages -----------------------------------------------------
    Endpoint("courses:home", SIGNED_IN),
    Endpoint("courses:create", INSTRUCTORS),
    Endpoint("courses:create", INSTRUCTORS, method="post", data=lambda w: {"title": ""}, ok=frozenset({400}), note="bad form: refused"),
    Endpoint("courses:join-by-code", frozenset(ACTORS), data=lambda w: {"code": w.join_link_a.code}, ok=frozenset({302}),
             check=_redirects_to(lambda w: reverse("courses:join", args=[w.join_link_a.code])), note="on to the join page"),
    Endpoint("courses:join", SIGNED_IN, kwargs=lambda w: {"code": w.join_link_a.code}, note="anyone with the link"),
    Endpoint("courses:join", SIGNED_IN, kwargs=lambda w: {"code": w.join_link_a.code}, method="post", ok=frozenset({302}),
             check=_redirects_to(_to_course_a), note="joins as a learner"),
    Endpoint("courses:course", MEMBERS_A, kwargs=_course_a),
    Endpoint("courses:edit", OWNER_A, kwargs=_course_a),
    Endpoint("courses:edit", OWNER_A, kwargs=_course_a, method="post", data=lambda w: {"title": ""}, ok=frozenset({400})),
    Endpoint("courses:staff", OWNER_A, kwargs=_course_a),
    Endpoint("courses:staff", OWNER_A, kwargs=_course_a, method="post", ok=POST_ANSWERS),
    Endpoint("courses:staff-role", OWNER_A, kwargs=_course_a_with(user_id=_user_pk("ta")), method="post", ok=frozenset({302}),
             data=lambda w: {"role": "teacher"}, check=_redirects_to(lambda w: reverse("courses:staff", args=[w.course_a.slug]))),
    Endpoint("courses:staff-remove", OWNER_A, kwargs=_course_a_with(user_id=_user_pk("ta")), method="post", ok=frozenset({302}),
             check=_redirects_to(lambda w: reverse("courses:staff", args=[w.course_a.slug]))),
    Endpoint("courses:link-create", STAFF_A, kwargs=_course_a, method="post", ok=frozenset({302}), check=_redirects_to(_to_course_a)),
    Endpoint("courses:link-revoke", STAFF_A, kwargs=_course_a_with(pk=_pk(lambda w: w.join_link_a)), method="post", ok=frozenset({302}),
             check=_redirects_to(_to_course_a)),
    Endpoint("courses:roster-upload", STAFF_A, kwargs=_course_a, method="post", ok=frozenset({400}), note="no file: the form's refusal"),
    Endpoint("courses:learner-remove", STAFF_A, kwargs=_course_a_with(user_id=LEARNER_A), method="post", ok=frozenset({302}),
             check=_redirects_to(_to_course_a)),
    Endpoint("courses:assignment-new", TEACHERS_A, kwargs=_course_a),
    Endpoint("courses:assignment-new", TEACHERS_A, kwargs=_course_a, method="post", data=lambda w: {"title": ""}, ok=frozenset({400})),
    Endpoint("courses:assignment", STAFF_A, kwargs=_course_a_with(pk=ASSIGNMENT_A)),
    Endpoint("courses:assignment-edit", TEACHERS_A, kwargs=_course_a_with(pk=ASSIGNMENT_A)),
    Endpoint("courses:assignment-edit", TEACHERS_A, kwargs=_course_a_with(pk=ASSIGNMENT_A), method="post", data=lambda w: {"title": ""}, ok=frozenset({400})),
    Endpoint("courses:assignment-delete", TEACHERS_A, kwargs=_course_a_with(pk=ASSIGNMENT_A), method="post", ok=frozenset({302}),
             check=_redirects_to(_to_course_a)),
    Endpoint("courses:extension-grant", TEACHERS_A, kwargs=_course_a_with(pk=ASSIGNMENT_A), method="post", ok=POST_ANSWERS),
    Endpoint("courses:extension-remove", TEACHERS_A, kwargs=_course_a_with(pk=ASSIGNMENT_A, user_id=LEARNER_A), method="post",
             ok=frozenset({302}), check=_redirects_to(lambda w: reverse("courses:assignment", args=[w.course_a.slug, w.assignment_a.pk]))),
    # --- courses: the gradebook and the teacher's tools -------------------------------------
    Endpoint("courses:gradebook", STAFF_A, kwargs=_course_a),
    Endpoint("courses:gradebook-csv", STAFF_A, kwargs=_course_a, check=_is_file("text/csv"), note="CSV"),
    Endpoint("courses:gradebook-rung", STAFF_A, kwargs=_course_a_with(assignment_id=ASSIGNMENT_A, rung_slug=RUNG)),
    Endpoint("courses:gradebook-attempts", STAFF_A, kwargs=_course_a_with(assignment_id=ASSIGNMENT_A, rung_slug=RUNG, user_id=LEARNER_A)),
    Endpoint("courses:tools", STAFF_A, kwargs=_course_a, note="learners and rungs: the way in"),
    Endpoint("courses:timeline", STAFF_A, kwargs=_course_a_with(user_id=LEARNER_A)),
    Endpoint("courses:feedback", STAFF_A, kwargs=_course_a_with(pk=_pk(lambda w: w.submission_a))),
    Endpoint("courses:feedback", STAFF_A, kwargs=_course_a_with(pk=_pk(lambda w: w.submission_a)), method="post",
             data=lambda w: {"line": 1, "body": "Why this name?"}, ok=frozenset({302}),
             check=_redirects_to(lambda w: reverse("courses:feedback", args=[w.course_a.slug, w.submission_a.pk])), note="a line comment"),
    Endpoint("courses:mistakes", STAFF_A, kwargs=_course_a_with(rung_slug=RUNG)),
    Endpoint("courses:speed-boards", STAFF_A, kwargs=_course_a_with(rung_slug=RUNG), note="usernames: the course's learners only"),
    Endpoint("courses:similarity", STAFF_A, kwargs=_course_a_with(assignment_id=ASSIGNMENT_A)),
    Endpoint("courses:similarity", STAFF_A, kwargs=_course_a_with(assignment_id=ASSIGNMENT_A), method="post", data=lambda w: {"threshold": "x"},
             ok=frozenset({400}), note="bad form: refused"),
    Endpoint("courses:similarity-report", STAFF_A, kwargs=_course_a_with(report_id=_pk(lambda w: w.similarity_a))),
    Endpoint("courses:similarity-pair", STAFF_A, kwargs=_course_a_with(report_id=_pk(lambda w: w.similarity_a), number=lambda w: 0),
             note="two learners' code side by side"),
    # --- the LMS course's roster (lti), and the notifications (frontend) --------------------
    Endpoint("lti:course-roster", STAFF_A, kwargs=_course_a, note="the LMS course's members"),
    Endpoint("lti:course-roster", STAFF_A, kwargs=_course_a, method="post", ok=frozenset({302}),
             check=_redirects_to(lambda w: reverse("lti:course-roster", args=[w.course_a.slug])), note="fetch from the LMS"),
    Endpoint("lti:module-roster", STAFF_A, kwargs=_module, note="a course role, never a content role"),
    Endpoint("notifications", SIGNED_IN, note="one's own"),
    # --- authoring: content roles on module M ---------------------------------------------
    Endpoint("authoring:home", INSTRUCTORS | READERS),
    Endpoint("authoring:preview", INSTRUCTORS | READERS, method="post", data=lambda w: {"text": "# Hello"}),
    Endpoint("authoring:import", INSTRUCTORS, method="post", ok=POST_ANSWERS, note="no file: the form's refusal"),
    Endpoint("authoring:operations", ADMIN),
    Endpoint("authoring:rejudge", ADMIN, kwargs=lambda w: {"pk": w.rejudge.pk}),
    Endpoint("authoring:module-create", INSTRUCTORS),
    Endpoint("authoring:module", READERS, kwargs=_module),
    Endpoint("authoring:module", EDITORS, kwargs=_module, method="post", ok=POST_ANSWERS),
    Endpoint("authoring:module-roles", READERS, kwargs=_module),
    Endpoint("authoring:module-roles", EDITORS, kwargs=_module, method="post", ok=POST_ANSWERS, note="grant or revoke"),
    Endpoint("authoring:module-export", READERS, kwargs=_module, check=_is_file("application/zip"), note="references and hidden tests"),
    Endpoint("authoring:module-csv", READERS, kwargs=_module, check=_is_file("text/csv")),
    Endpoint("authoring:module-dashboard", READERS, kwargs=_module),
    Endpoint("authoring:rung-create", EDITORS, kwargs=_module, method="post", ok=POST_ANSWERS),
    Endpoint("authoring:rung", READERS, kwargs=_rung, note="hidden tests' source"),
    Endpoint("authoring:rung", EDITORS, kwargs=_rung, method="post", ok=POST_ANSWERS),
    Endpoint("authoring:rung-check", EDITORS, kwargs=_rung, method="post", ok=POST_ANSWERS, note="Check"),
    Endpoint("authoring:check-state", READERS, kwargs=lambda w: {**_rung(w), "pk": w.extra["check"].pk}),
    Endpoint("authoring:rung-publish", EDITORS, kwargs=_rung, method="post", ok=POST_ANSWERS, note="Publish"),
    Endpoint("authoring:rung-discard", EDITORS, kwargs=_rung, method="post", ok=POST_ANSWERS),
    Endpoint("authoring:rung-dashboard", READERS, kwargs=_rung),
    Endpoint("authoring:reports", READERS, kwargs=_module),
    Endpoint("authoring:report", READERS, kwargs=lambda w: {**_module(w), "pk": w.extra["problem"].pk}),
    Endpoint("authoring:report", EDITORS, kwargs=lambda w: {**_module(w), "pk": w.extra["problem"].pk}, method="post", ok=POST_ANSWERS),
)

# Course A's pages with course B's objects in them: even course A's owner and an admin get a 404.
CROSSED: tuple[tuple[str, Kwargs], ...] = (
    ("courses:assignment", _course_a_with(pk=ASSIGNMENT_B)),
    ("courses:assignment-edit", _course_a_with(pk=ASSIGNMENT_B)),
    ("courses:gradebook-rung", _course_a_with(assignment_id=ASSIGNMENT_B, rung_slug=RUNG)),
    ("courses:gradebook-attempts", _course_a_with(assignment_id=ASSIGNMENT_A, rung_slug=RUNG, user_id=LEARNER_B)),
    ("courses:timeline", _course_a_with(user_id=LEARNER_B)),
    ("courses:feedback", _course_a_with(pk=_pk(lambda w: w.submission_b))),
    ("courses:similarity", _course_a_with(assignment_id=ASSIGNMENT_B)),
    ("courses:similarity-report", _course_a_with(report_id=_pk(lambda w: w.extra["similarity_b"]))),
    ("courses:similarity-pair", _course_a_with(report_id=_pk(lambda w: w.extra["similarity_b"]), number=lambda w: 0)),
)


# --- The world ------------------------------------------------------------------------


def _user(username: str, **extra: Any) -> User:
    return User.objects.create(username=username, **extra)


def _grant_content_role(module: Module, user: User, role: str, by: User) -> None:
    from authoring.content_roles import grant_role

    grant_role(module, by, user.username, role)


def _build_world() -> World:
    users = {name: _user(name) for name in ACTORS if name not in {"admin", "anonymous"}}
    users["admin"] = _user("admin", is_staff=True, is_superuser=True)
    for name in ("owner", "teacher", "teacher_b"):
        make_instructor(users[name])
    learner_b = _user("learner_b")
    track = Track.objects.create(slug="track-m", title="Track")
    module = Module.objects.create(track=track, slug="module-m", title="Module M", external_id="P99.m.01")
    rung = Rung.objects.create(module=module, slug="rung-m", order=1)
    version = RungVersion.objects.create(
        rung=rung, number=1, content_hash="h1", title="Rung M", minutes=5, difficulty="easy",
        instructions_md="# Rung M", starter_code="def secret_edge_zq7():\n    raise NotImplementedError\n",
        reference_code="def secret_edge_zq7():\n    return 7\n",
        visible_tests="def test_visible(solution):\n    assert solution.secret_edge_zq7() == 7\n",
        hidden_tests=f"def test_hidden(solution):\n    {HIDDEN_SOURCE}\n",
        hidden_test_meta={"test_hidden": {"description": "The hidden edge case."}},
        wrong_solutions={"wrong.py": {"description": "Off by one.", "code": WRONG_SOURCE}},
        alternatives={"sum.py": {"description": "Adds.", "code": ALTERNATIVE_SOURCE}},
    )
    rung.current_version = version
    rung.save(update_fields=["current_version"])
    _grant_content_role(module, users["editor"], "editor", users["admin"])
    _grant_content_role(module, users["viewer"], "viewer", users["admin"])

    now = timezone.now()
    course_a = Course.objects.create(slug="course-a", title="Course A", created_by=users["owner"])
    course_b = Course.objects.create(slug="course-b", title="Course B", created_by=users["teacher_b"])
    for course in (course_a, course_b):
        course.modules.add(module)
    for name, role in (("owner", CourseRole.OWNER), ("teacher", CourseRole.TEACHER), ("ta", CourseRole.TA), ("learner", CourseRole.LEARNER)):
        enrol(course_a, users[name], role, EnrolSource.STAFF)
    enrol(course_b, users["teacher_b"], CourseRole.OWNER, EnrolSource.CREATED)
    enrol(course_b, learner_b, CourseRole.LEARNER, EnrolSource.STAFF)

    def assignment(course: Course) -> Assignment:
        made = Assignment.objects.create(
            course=course, title=f"Week 1 of {course.title}", opens_at=now - dt.timedelta(days=7), due_at=now - dt.timedelta(days=1),
            late_policy=LatePolicy.PENALTY, hard_close_at=now + dt.timedelta(days=1), late_factor=0.5,
        )
        AssignmentRung.objects.create(assignment=made, rung=rung, order=0)
        return made

    def submission(user: User) -> Submission:
        return Submission.objects.create(
            user=user, rung=rung, rung_version=version, kind=Kind.SUBMIT, code="def secret_edge_zq7():\n    return 7\n",
            status=Status.DONE, outcome=Outcome.PASSED, finished_at=now,
        )

    def enrolled(course: Course, username: str) -> User:
        user = _user(username)
        enrol(course, user, CourseRole.LEARNER, EnrolSource.STAFF)
        return user

    assignment_a, assignment_b = assignment(course_a), assignment(course_b)
    submission_a, submission_b = submission(users["learner"]), submission(learner_b)
    world = World(
        users=users, learner_b=learner_b, module=module, rung=rung, version=version,
        course_a=course_a, course_b=course_b, assignment_a=assignment_a, assignment_b=assignment_b,
        submission_a=submission_a, submission_b=submission_b,
        feedback_a=Feedback.objects.create(course=course_a, submission=submission_a, author=users["teacher"], line=1, body="Name it better."),
        join_link_a=JoinLink.objects.create(course=course_a, code="JOINCODEA2", created_by=users["owner"]),
        similarity_a=_similar_pair(assignment_a, submission_a, submission(enrolled(course_a, "learner_a2")), users["teacher"]),
        rejudge=Rejudge.objects.create(target=Rejudge.Target.CURRENT, created_by=users["admin"]),
    )
    _link_to_an_lms(course_a, module)
    world.extra["similarity_b"] = _similar_pair(assignment_b, submission_b, submission(enrolled(course_b, "learner_b2")), users["teacher_b"])
    _add_content_objects(world)
    return world


def _link_to_an_lms(course: Course, module: Module) -> None:
    """Make ``course`` an LMS course whose link opens ``module`` (as a launch would have)."""
    from lti_tool.models import LtiContext, LtiDeployment, LtiRegistration, LtiResourceLink

    from lti.models import CourseContext, Placement

    registration = LtiRegistration.objects.create(name="LMS", issuer="https://lms.example", client_id="c1", auth_url="https://lms.example/auth",
                                                  token_url="https://lms.example/token", keyset_url="https://lms.example/jwks")
    deployment = LtiDeployment.objects.create(registration=registration, deployment_id="d1", is_active=True)
    context = LtiContext.objects.create(deployment=deployment, id_on_platform="ctx-a", title="LMS course A")
    Placement.objects.create(resource_link=LtiResourceLink.objects.create(context=context, id_on_platform="link-1"), module=module)
    CourseContext.objects.create(context=context, course=course)


def _similar_pair(assignment: Assignment, a: Submission, b: Submission, by: User) -> SimilarityReport:
    """A finished similarity report of ``assignment`` whose one pair is ``a`` and ``b``."""
    pair = {"a": a.pk, "b": b.pk, "score": 0.9, "score_a": 0.9, "score_b": 0.9, "ranges_a": [], "ranges_b": []}
    return SimilarityReport.objects.create(
        assignment=assignment, rung=a.rung, created_by=by, state=ReportState.DONE, pairs=[pair], compared=2, finished_at=timezone.now(),
    )


def _add_content_objects(world: World) -> None:
    """What the authoring pages open: a draft of rung M with a Check, and a learner's problem report."""
    from aids.models import ProblemReport
    from authoring.models import RungCheck, RungDraft

    version = world.version
    draft = RungDraft.objects.create(
        module=world.module, rung=world.rung, base_version=version, slug=world.rung.slug, title=version.title,
        instructions_md=version.instructions_md, starter_code=version.starter_code, reference_code=version.reference_code,
        visible_tests=version.visible_tests, hidden_tests=version.hidden_tests, hidden_test_meta=version.hidden_test_meta,
        wrong_solutions=version.wrong_solutions, alternatives=version.alternatives,
    )
    world.extra["check"] = RungCheck.objects.create(
        draft=draft, content_hash="stale", status=Status.DONE, ok=False,
        mutation={"mutation_score": 0.5, "surviving": [{"id": "m1", "diff": f"--- a\n+++ b\n@@ -2 +2 @@\n-    return 7\n+    {MUTANT_SOURCE}\n"}]},
    )
    world.extra["problem"] = ProblemReport.objects.create(
        learner=world.users["learner"], rung=world.rung, rung_version=version, submission=world.submission_a, message="Test 3 is wrong?",
    )


@pytest.fixture
def world(db: Any, monkeypatch: pytest.MonkeyPatch) -> World:
    from celery.app.task import Task

    from grader import lifecycle

    monkeypatch.setattr(Task, "apply_async", lambda *args, **kwargs: None)
    monkeypatch.setattr(lifecycle, "enqueue", lambda *args, **kwargs: None)
    return _build_world()


class Actors:
    """One test client, signed in as each actor in turn (one client: each new one loads the middleware again, whitenoise's file scan included)."""

    def __init__(self, world: World) -> None:
        self.client = Client()
        self.cookies: dict[str, SimpleCookie] = {"anonymous": SimpleCookie()}
        for actor in ACTORS[:-1]:
            self.client.cookies = SimpleCookie()
            self.client.force_login(world.users[actor])
            self.cookies[actor] = self.client.cookies

    def as_(self, actor: str) -> Client:
        self.client.cookies = copy.deepcopy(self.cookies[actor])
        return self.client


@pytest.fixture
def actors(world: World) -> Actors:
    return Actors(world)


# --- The checks -----------------------------------------------------------------------


def _body(response: HttpResponse) -> bytes:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content)  # type: ignore[attr-defined]
    return bytes(response.content)


def _is_login_redirect(response: HttpResponse) -> bool:
    return response.status_code == 302 and response["Location"].startswith(resolve_url(settings.LOGIN_URL))


def _send(client: Client, endpoint: Endpoint, world: World) -> tuple[HttpResponse, bytes]:
    url = reverse(endpoint.name, kwargs=endpoint.kwargs(world))
    savepoint = transaction.atomic()
    savepoint._from_testcase = True  # type: ignore[attr-defined]  # the test's own block, as core.write_guard counts them
    with savepoint:
        response = getattr(client, endpoint.method)(url, endpoint.data(world))
        body = _body(response)
        transaction.set_rollback(True)
    return response, body


def _verdict(endpoint: Endpoint, actor: str, response: HttpResponse, body: bytes, world: World) -> str | None:
    """What is wrong with ``actor``'s answer, or None."""
    status = response.status_code
    if actor not in CONTENT_READERS and any(secret in body for secret in SECRETS):
        return f"{status} shows a hidden test, a wrong solution, an alternative or a mutant"
    if actor not in endpoint.allowed:
        if actor == "anonymous":
            return None if _is_login_redirect(response) or status == 401 else f"{status}, not the login page"
        if actor in OUTSIDERS_OF_A and endpoint.kwargs(world).get("slug") == world.course_a.slug and status != 404:
            return f"{status}: course A's page tells an outsider it exists (404 expected)"
        return None if status in (403, 404) else f"{status}, not denied"
    if status not in endpoint.ok or _is_login_redirect(response):
        return f"{status}{' to ' + response['Location'] if status == 302 else ''}, not allowed"
    if endpoint.check is not None and not endpoint.check(response, world):
        return f"{status} {response.get('Content-Type')}: not what an allowed call answers"
    return None


@pytest.mark.parametrize("endpoint", MATRIX, ids=lambda endpoint: endpoint.id)
def test_each_actor_gets_what_the_matrix_says(endpoint: Endpoint, world: World, actors: Actors) -> None:
    wrong = {}
    for actor in ACTORS:
        response, body = _send(actors.as_(actor), endpoint, world)
        if (found := _verdict(endpoint, actor, response, body, world)) is not None:
            wrong[actor] = found
    assert not wrong, f"{endpoint.id}: {wrong}"


def test_the_content_readers_do_see_what_everyone_else_must_not(world: World, actors: Actors) -> None:
    """The secrets the matrix looks for are on the editor's page of the rung: their absence elsewhere means something."""
    body = actors.as_("editor").get(reverse("authoring:rung", kwargs=_rung(world))).content
    assert [secret for secret in SECRETS if secret not in body] == []


@pytest.mark.parametrize(("name", "kwargs"), CROSSED, ids=[name for name, _ in CROSSED])
def test_course_a_pages_never_open_course_b_objects(name: str, kwargs: Kwargs, world: World, actors: Actors) -> None:
    url = reverse(name, kwargs=kwargs(world))
    assert {actor: actors.as_(actor).get(url).status_code for actor in ("admin", "owner")} == {"admin": 404, "owner": 404}


# --- Every endpoint has an entry ------------------------------------------------------


def _patterns(patterns: list[Any], prefix: str, namespace: str | None) -> Iterator[tuple[str, str, str | None]]:
    """(namespace, route, name) of every URL pattern below ``patterns``."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _patterns(pattern.url_patterns, prefix + str(pattern.pattern), pattern.namespace or namespace)
        elif isinstance(pattern, URLPattern):
            yield namespace or "", prefix + str(pattern.pattern), pattern.name


def _app_endpoints() -> dict[str, str]:
    """'app:name' -> '/route/' of every pattern of the apps the matrix covers."""
    found = {}
    for namespace, route, name in _patterns(get_resolver().url_patterns, "/", None):
        full = f"{namespace}:{name}" if namespace else str(name)
        if namespace in APPS or full in EXTRA:
            assert name, f"{route} has no name: the matrix cannot name it"
            found[full] = route
    return found


def test_every_endpoint_has_an_entry() -> None:
    endpoints = _app_endpoints()
    covered = {endpoint.name for endpoint in MATRIX}
    assert not set(endpoints) - covered, f"endpoints without an entry in the authorization matrix: {sorted(set(endpoints) - covered)}"
    assert not covered - set(endpoints), f"entries for endpoints that no longer exist: {sorted(covered - set(endpoints))}"


# --- The table in docs/courses.md -----------------------------------------------------

START, END = "<!-- authorization-matrix:start -->", "<!-- authorization-matrix:end -->"


def matrix_table() -> str:
    """The matrix as the Markdown table docs/courses.md shows."""
    routes = _app_endpoints()
    head = "| endpoint | " + " | ".join(LABELS[actor] for actor in ACTORS) + " |"
    rows = [head, "| --- |" + " :-: |" * len(ACTORS)]
    for endpoint in MATRIX:
        route = re.sub(r"<(?:\w+:)?(\w+)>", r"<\1>", routes[endpoint.name])
        what = f"`{endpoint.method.upper()} {route}`" + (f" ({endpoint.note})" if endpoint.note else "")
        rows.append(f"| {what} | " + " | ".join("yes" if actor in endpoint.allowed else "no" for actor in ACTORS) + " |")
    return "\n".join(rows)


def test_the_docs_table_is_the_matrix() -> None:
    text = DOC.read_text()
    table = f"{START}\n{matrix_table()}\n{END}"
    current = re.search(re.escape(START) + ".*?" + re.escape(END), text, re.DOTALL)
    if os.environ.get("UPDATE_DOCS") == "1":
        DOC.write_text(text.replace(current.group(0), table) if current else text.rstrip("\n") + "\n\n" + table + "\n")
        return
    assert current is not None, f"docs/courses.md has no authorization matrix (between {START} and {END})"
    assert current.group(0) == table, "docs/courses.md's matrix differs from MATRIX: UPDATE_DOCS=1 pytest courses/tests/test_authorization_matrix.py -k docs"
