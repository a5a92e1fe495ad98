"""Every authoring page and API, for every persona: learners see none of it,
instructors only their own modules, admins everything."""

from __future__ import annotations

from typing import Any

import pytest

from authoring import services, transfer
from authoring.models import ModuleRole, RungCheck, RungDraft
from exercises.models import Module, Rung, Track
from exercises.services import publish_rung_version
from grader.models import Rejudge

from .conftest import ADD_RUNG

pytestmark = pytest.mark.django_db

PERSONAS = ["anonymous", "learner", "other_learner", "instructor", "other_instructor", "admin_user"]
M = "/author/modules/warm-ups"
R = f"{M}/rungs/add-two"


@pytest.fixture
def world(instructor: Any, admin_user: Any) -> dict[str, Any]:
    track = Track.objects.create(slug="basics", title="Basics")
    module = Module.objects.create(track=track, slug="warm-ups", title="Warm-ups", external_id="P0.warm-ups.01")
    ModuleRole.objects.create(module=module, user=instructor, role="editor")
    rung = Rung.objects.create(module=module, slug="add-two", order=1)
    draft = services.draft_from_version(module, rung)
    for name in ("instructions_md", "starter_code", "reference_code", "visible_tests", "hidden_tests"):
        setattr(draft, name, ADD_RUNG[name].replace("\r\n", "\n"))
    draft.title, draft.minutes = "Add two numbers", 5
    draft.hidden_test_meta = {"test_negative_numbers": {"description": "d"}, "test_zero": {"description": "d"}}
    publish_rung_version(rung, transfer.read_rung_files(services.draft_files(draft), "add-two", 1))
    draft.save()
    check = RungCheck.objects.create(draft=draft, content_hash="x", files={})
    rejudge = Rejudge.objects.create(created_by=admin_user, target=Rejudge.Target.CURRENT)
    return {"check": check, "rejudge": rejudge}


def _client_for(persona: str, request: Any, client: Any) -> Any:
    if persona != "anonymous":
        client.force_login(request.getfixturevalue(persona))
    return client


# (method, url, data, {persona: expected status}); a missing persona means the default of its row.
OWNER_ONLY = {"anonymous": 302, "learner": 403, "other_learner": 403, "instructor": 200, "other_instructor": 403, "admin_user": 200}
OWNER_ONLY_POST = {"anonymous": 401, "learner": 403, "other_learner": 403, "instructor": 302, "other_instructor": 403, "admin_user": 302}
INSTRUCTORS = {"anonymous": 302, "learner": 403, "other_learner": 403, "instructor": 200, "other_instructor": 200, "admin_user": 200}
ADMINS = {"anonymous": 302, "learner": 403, "other_learner": 403, "instructor": 403, "other_instructor": 403, "admin_user": 200}

CASES: list[tuple[str, str, dict[str, Any], dict[str, int]]] = [
    ("get", "/author/", {}, INSTRUCTORS),
    ("get", "/author/modules/new", {}, INSTRUCTORS),
    ("post", "/author/preview", {"text": "$x$"}, {**INSTRUCTORS, "anonymous": 401}),
    ("post", "/author/import", {}, {**OWNER_ONLY_POST, "other_instructor": 302}),
    ("get", f"{M}/", {}, OWNER_ONLY),
    ("post", f"{M}/", {"title": ""}, {**OWNER_ONLY_POST, "instructor": 200, "admin_user": 200}),  # invalid form: re-rendered
    ("get", f"{M}/export.zip", {}, OWNER_ONLY),
    ("get", f"{M}/progress.csv", {}, OWNER_ONLY),
    ("get", f"{M}/dashboard", {}, OWNER_ONLY),
    ("post", f"{M}/rungs/new", {"rung-slug": "sub-two", "rung-title": "Subtract"}, OWNER_ONLY_POST),
    ("get", f"{R}/", {}, OWNER_ONLY),
    ("post", f"{R}/", {**ADD_RUNG, "action": "save"}, OWNER_ONLY_POST),
    ("post", f"{R}/check", {}, OWNER_ONLY_POST),
    ("get", f"{R}/checks/{{check}}", {}, OWNER_ONLY),
    ("post", f"{R}/publish", {}, OWNER_ONLY_POST),
    ("post", f"{R}/discard", {}, OWNER_ONLY_POST),
    ("get", f"{R}/dashboard", {}, OWNER_ONLY),
    ("get", "/author/operations/", {}, ADMINS),
    ("get", "/author/operations/?format=json", {}, ADMINS),
    ("get", "/author/rejudges/{rejudge}/", {}, ADMINS),
    ("post", "/author/rejudges/{rejudge}/", {"confirm": "on"}, {**ADMINS, "anonymous": 401, "admin_user": 302}),
    ("get", "/admin/grader/submission/", {}, {**ADMINS, "learner": 302, "other_learner": 302, "instructor": 302, "other_instructor": 302}),
    ("get", "/admin/grader/rejudge/", {}, {**ADMINS, "learner": 302, "other_learner": 302, "instructor": 302, "other_instructor": 302}),
]


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize(("method", "url", "data", "expected"), CASES, ids=[f"{m} {u}" for m, u, _, _ in CASES])
def test_each_persona_gets_exactly_its_rights(persona, method, url, data, expected, world, request, client):
    http = _client_for(persona, request, client)
    target = url.format(check=world["check"].pk, rejudge=world["rejudge"].pk)
    response = getattr(http, method)(target, data)
    assert response.status_code == expected[persona], (persona, target, response.content[:500])


def test_a_refused_instructor_changes_nothing(world, other_instructor, client):
    client.force_login(other_instructor)
    client.post(f"{R}/", {**ADD_RUNG, "title": "Hijacked", "action": "save"})
    client.post(f"{R}/discard")
    client.post(f"{M}/rungs/new", {"rung-slug": "sub-two", "rung-title": "Subtract"})
    assert RungDraft.objects.get(slug="add-two").title == "Add two numbers"
    assert not RungDraft.objects.filter(slug="sub-two").exists()


def test_an_instructors_home_lists_only_their_modules(world, other_instructor, instructor, client):
    client.force_login(other_instructor)
    assert "warm-ups" not in client.get("/author/").content.decode()
    client.force_login(instructor)
    assert "warm-ups" in client.get("/author/").content.decode()


def test_the_authoring_permission_alone_makes_an_instructor(world, learner, client):
    from django.contrib.auth.models import Permission

    learner.user_permissions.add(Permission.objects.get(codename="author_modules"))
    client.force_login(learner)
    assert client.get("/author/").status_code == 200
    assert client.get(f"{M}/").status_code == 403  # but owns nothing yet


def test_the_authoring_permission_through_any_group_makes_an_instructor(world, learner, client):
    from django.contrib.auth.models import Group, Permission

    group = Group.objects.create(name="course-staff")
    group.permissions.add(Permission.objects.get(codename="author_modules"))
    learner.groups.add(group)
    client.force_login(learner)
    assert client.get("/author/").status_code == 200
    learner.groups.remove(group)
    assert client.get("/author/").status_code == 403
