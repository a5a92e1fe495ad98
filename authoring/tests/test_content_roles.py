"""Content roles on a module (issue 57): an editor changes and publishes, a viewer reads everything and changes nothing,
anyone else gets nothing of the module; grants are recorded, and an import by anyone but an admin lands as drafts."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from aids import services as aids_services
from authoring import content_roles, services, transfer
from authoring.content_roles import RoleRefused
from authoring.exceptions import ImportRefused
from authoring.models import ModuleRole, ModuleRoleEvent, RungCheck, RungDraft
from exercises.models import Module, Rung, RungVersion, Track
from exercises.services import publish_rung_version

from .conftest import ADD_RUNG

pytestmark = pytest.mark.django_db

M = "/author/modules/warm-ups"
R = f"{M}/rungs/add-two"
PERSONAS = ["editor", "viewer", "stranger", "learner"]


@pytest.fixture
def editor(instructor: Any) -> Any:
    return instructor


@pytest.fixture
def viewer(django_user_model: Any) -> Any:
    """Not an instructor at all: the role on the module is what opens it."""
    return django_user_model.objects.create_user(username="vera", password="viewer-pass-123")


@pytest.fixture
def stranger(other_instructor: Any) -> Any:
    """An instructor with no role on this module."""
    return other_instructor


@pytest.fixture
def world(editor: Any, viewer: Any, learner: Any) -> dict[str, Any]:
    track = Track.objects.create(slug="basics", title="Basics")
    module = Module.objects.create(track=track, slug="warm-ups", title="Warm-ups", external_id="P0.warm-ups.01")
    ModuleRole.objects.create(module=module, user=editor, role="editor")
    ModuleRole.objects.create(module=module, user=viewer, role="viewer")
    rung = Rung.objects.create(module=module, slug="add-two", order=1)
    draft = services.draft_from_version(module, rung)
    for name in ("instructions_md", "starter_code", "reference_code", "visible_tests", "hidden_tests"):
        setattr(draft, name, ADD_RUNG[name].replace("\r\n", "\n"))
    draft.title, draft.minutes = "Add two numbers", 5
    draft.hidden_test_meta = {"test_negative_numbers": {"description": "d"}, "test_zero": {"description": "d"}}
    publish_rung_version(rung, transfer.read_rung_files(services.draft_files(draft), "add-two", 1))
    draft.save()
    check = RungCheck.objects.create(draft=draft, content_hash="x", files={})
    report = aids_services.file_report(user=learner, rung=rung, message="The example is off by one.", code="x = 1\n")
    return {"module": module, "check": check, "report": report}


READ = {"editor": 200, "viewer": 200, "stranger": 403, "learner": 403}
EDIT = {"editor": 302, "viewer": 403, "stranger": 403, "learner": 403}

# (method, url, data, {persona: status}): every authoring endpoint of a module, and the site-wide ones.
CASES: list[tuple[str, str, dict[str, Any], dict[str, int]]] = [
    ("get", "/author/", {}, {**READ, "stranger": 200}),
    ("post", "/author/preview", {"text": "*x*"}, {**READ, "stranger": 200}),
    ("get", "/author/modules/new", {}, {"editor": 200, "viewer": 403, "stranger": 200, "learner": 403}),
    ("post", "/author/import", {}, {"editor": 302, "viewer": 403, "stranger": 302, "learner": 403}),  # no file: refused with a message
    ("get", f"{M}/", {}, READ),
    ("post", f"{M}/", {"title": ""}, {**EDIT, "editor": 200}),  # invalid form, re-rendered
    ("get", f"{M}/export.zip", {}, READ),
    ("get", f"{M}/progress.csv", {}, READ),
    ("get", f"{M}/dashboard", {}, READ),
    ("get", f"{M}/roles", {}, READ),
    ("post", f"{M}/roles", {"action": "grant", "username": "ivan", "role": "viewer"}, EDIT),
    ("post", f"{M}/roles", {"action": "revoke", "user": "{viewer}"}, EDIT),
    ("post", f"{M}/rungs/new", {"rung-slug": "sub-two", "rung-title": "Subtract"}, EDIT),
    ("get", f"{R}/", {}, READ),
    ("post", f"{R}/", {**ADD_RUNG, "action": "save"}, EDIT),
    ("post", f"{R}/check", {}, EDIT),
    ("get", f"{R}/checks/{{check}}", {}, READ),
    ("post", f"{R}/publish", {}, EDIT),  # allowed, then refused by the gate: the Check is not done
    ("post", f"{R}/discard", {}, EDIT),
    ("get", f"{R}/dashboard", {}, READ),
    ("get", f"{M}/reports/", {}, READ),
    ("get", f"{M}/reports/{{report}}/", {}, READ),
    ("post", f"{M}/reports/{{report}}/", {"action": "resolve", "note": "Fixed."}, EDIT),
    ("get", "/author/operations/", {}, {persona: 403 for persona in PERSONAS}),
    ("get", "/mentor/modules/warm-ups/questions", {}, READ),
]


def _snapshot(module: Module) -> dict[str, Any]:
    return {
        "drafts": sorted(RungDraft.objects.filter(module=module).values_list("slug", "title", "updated_at")),
        "checks": RungCheck.objects.count(), "versions": RungVersion.objects.count(),
        "roles": sorted(ModuleRole.objects.filter(module=module).values_list("user__username", "role")),
        "module": Module.objects.filter(pk=module.pk).values("title", "external_id").get(),
        "reports": list(aids_services.report_queue(module, None).values_list("status", "note")),
    }


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize(("method", "url", "data", "expected"), CASES, ids=[f"{m} {u}" for m, u, _, _ in CASES])
def test_each_content_role_gets_exactly_its_rights(persona, method, url, data, expected, world, request, client, viewer):
    client.force_login(request.getfixturevalue(persona))
    target = url.format(check=world["check"].pk, report=world["report"].pk)
    before = _snapshot(world["module"])
    response = getattr(client, method)(target, {key: str(viewer.pk) if value == "{viewer}" else value for key, value in data.items()})
    assert response.status_code == expected[persona], (persona, target, response.content[:500])
    if method == "post" and expected[persona] == 403:
        assert _snapshot(world["module"]) == before  # a refused change changes nothing


def test_a_viewer_reads_the_editor_pages_and_the_export_but_gets_no_control_to_change_them(world, viewer, client):
    client.force_login(viewer)
    page = client.get(f"{R}/").content.decode()
    assert 'id="read-only"' in page and "<fieldset class=\"plain\" disabled>" in page
    assert "return a + b" in page  # the reference
    assert "Save draft" not in page and 'id="publish"' not in page and "Discard draft" not in page
    module_page = client.get(f"{M}/").content.decode()
    assert 'id="read-only"' in module_page and "New rung" not in module_page and "Save module" not in module_page
    exported = transfer.unzip_files(client.get(f"{M}/export.zip").content)
    assert "basics/warm-ups/rungs/01-add-two/test_hidden.py" in exported and "basics/warm-ups/rungs/01-add-two/reference.py" in exported
    assert 'id="grant-form"' not in client.get(f"{M}/roles").content.decode() and "Revoke" not in client.get(f"{M}/roles").content.decode()
    assert "Resolve with this note" not in client.get(f"{M}/reports/{world['report'].pk}/").content.decode()


def test_grants_and_revokes_are_recorded_with_who_whom_and_when(world, editor, stranger, client):
    client.force_login(editor)
    client.post(f"{M}/roles", {"action": "grant", "username": stranger.username, "role": "viewer"})
    client.post(f"{M}/roles", {"action": "grant", "username": stranger.username, "role": "editor"})  # a change of role
    assert ModuleRole.objects.get(module=world["module"], user=stranger).role == "editor"
    assert client.get(f"{R}/").status_code == 200 and client.force_login(stranger) is None
    assert client.post(f"{R}/", {**ADD_RUNG, "action": "save"}).status_code == 302  # the new editor edits
    client.force_login(editor)
    client.post(f"{M}/roles", {"action": "revoke", "user": str(stranger.pk)})
    assert not ModuleRole.objects.filter(module=world["module"], user=stranger).exists()
    events = list(ModuleRoleEvent.objects.filter(module=world["module"]).order_by("pk"))
    assert [(e.actor_id, e.actor_name, e.subject_id, e.subject_name, e.role, e.action) for e in events] == [
        (editor.pk, editor.username, stranger.pk, stranger.username, "viewer", "grant"),
        (editor.pk, editor.username, stranger.pk, stranger.username, "editor", "grant"),
        (editor.pk, editor.username, stranger.pk, stranger.username, "editor", "revoke"),
    ]
    assert all(event.at is not None for event in events)
    page = client.get(f"{M}/roles").content.decode()
    assert page.count(f"<td>{stranger.username}</td>") == 3  # the record names whom, three times
    with pytest.raises(ValueError, match="append-only"):
        events[0].save()


def test_only_an_editor_or_an_admin_grants(world, viewer, stranger, learner, admin_user):
    module = world["module"]
    for actor in (viewer, stranger, learner):
        with pytest.raises(RoleRefused, match="Only an editor"):
            content_roles.grant_role(module, actor, learner.username, "editor")
        with pytest.raises(RoleRefused, match="Only an editor"):
            content_roles.revoke_role(module, actor, viewer.pk)
    assert not ModuleRole.objects.filter(user=learner).exists() and not ModuleRoleEvent.objects.exists()
    content_roles.grant_role(module, admin_user, learner.username, "viewer")
    assert ModuleRole.objects.get(user=learner).granted_by == admin_user


def test_the_last_editor_stays_unless_an_admin_removes_them_and_unknown_names_are_said(world, editor, admin_user):
    module = world["module"]
    with pytest.raises(RoleRefused, match="last editor"):
        content_roles.revoke_role(module, editor, editor.pk)
    with pytest.raises(RoleRefused, match="last editor"):
        content_roles.grant_role(module, editor, editor.username, "viewer")
    with pytest.raises(RoleRefused, match="No active account is called “nobody”"):
        content_roles.grant_role(module, editor, "nobody", "viewer")
    content_roles.revoke_role(module, admin_user, editor.pk)
    assert not ModuleRole.objects.filter(module=module, role="editor").exists()


def test_creating_a_module_makes_its_creator_its_editor(instructor, client):
    track = Track.objects.create(slug="basics", title="Basics")
    client.force_login(instructor)
    response = client.post("/author/modules/new", {"track": track.pk, "slug": "fresh", "external_id": "P0.fresh.01", "title": "Fresh", "order": "1"})
    assert response.status_code == 302, response.content.decode()[:2000]
    role = ModuleRole.objects.get(module__slug="fresh")
    assert (role.user, role.role) == (instructor, "editor")
    assert ModuleRoleEvent.objects.filter(module__slug="fresh", action="grant", subject=instructor, actor=instructor).exists()


# --- The content gate on import ------------------------------------------------------------------


def _changed_export(module: Module) -> dict[str, str]:
    """The module's export with its rung changed and a second, new rung."""
    files = transfer.export_module(module)
    folder = "basics/warm-ups/rungs/01-add-two/"
    files[f"{folder}instructions.md"] += "\nNow with a note.\n"
    for name, text in list(files.items()):
        if name.startswith(folder):
            files[name.replace("01-add-two", "02-add-three")] = text.replace("slug: add-two", "slug: add-three")
    return files


def test_an_editors_import_lands_as_drafts_and_publishes_nothing(world, editor, client):
    module = world["module"]
    rung = Rung.objects.get(slug="add-two")
    current = rung.current_version
    files = _changed_export(module)
    client.force_login(editor)
    upload = SimpleUploadedFile("warm-ups.zip", transfer.zip_files(files), content_type="application/zip")
    response = client.post("/author/import", {"archive": upload}, follow=True)
    assert "as drafts" in response.content.decode()
    rung.refresh_from_db()
    assert rung.current_version == current and RungVersion.objects.count() == 1  # nothing published, no version made current
    assert not Rung.objects.filter(slug="add-three").exists()
    changed = RungDraft.objects.get(slug="add-two")
    assert changed.instructions_md.endswith("Now with a note.\n") and changed.base_version == current and changed.updated_by == editor
    new = RungDraft.objects.get(slug="add-three")
    assert new.rung is None and new.order == 2
    # Publishing goes through the Check like any edit: without a passing one, it is refused.
    RungCheck.objects.all().delete()
    response = client.post(f"{R}/publish", follow=True)
    assert "run a Check first" in response.content.decode()
    assert Rung.objects.get(slug="add-two").current_version == current


def test_an_admins_import_publishes_at_once(world, admin_user):
    report = transfer.import_files(_changed_export(world["module"]), admin_user)
    assert sorted(report.new_versions) == ["add-three", "add-two"] and report.drafts == []
    current = Rung.objects.get(slug="add-two").current_version
    assert current is not None and current.number == 2


def test_a_viewer_cannot_import_over_the_module(world, viewer):
    from core.roles import make_instructor

    make_instructor(viewer)  # an instructor too, yet only a viewer of this module
    with pytest.raises(ImportRefused, match="only its editors import over it"):
        transfer.import_files(_changed_export(world["module"]), viewer)
    assert not RungDraft.objects.filter(slug="add-three").exists()


# --- A catalog id names one module ------------------------------------------------------------------


def test_a_module_may_not_take_another_modules_catalog_id(catalog, instructor, client):
    """The shipped modules' "Where next" links follow the id: a module made with it would take them over."""
    track = Track.objects.get(slug="llm-systems-frontier")
    client.force_login(instructor)
    response = client.post("/author/modules/new", {"track": track.pk, "slug": "impostor", "external_id": "P10.llm-systems-frontier.02",
                                                   "title": "Impostor", "order": "9"})
    assert response.status_code == 200
    assert "The id “P10.llm-systems-frontier.02” is already module “training-at-scale”&#x27;s" in response.content.decode()
    assert not Module.objects.filter(slug="impostor").exists()
    page = client.get("/modules/inference-and-serving/").content.decode()
    assert 'href="/modules/training-at-scale/"' in page or "/modules/training-at-scale" in page

    mine = Module.objects.create(track=track, slug="mine", title="Mine", external_id="P0.mine.01")
    ModuleRole.objects.create(module=mine, user=instructor, role="editor")
    response = client.post("/author/modules/mine/", {"track": track.pk, "external_id": "P10.llm-systems-frontier.01", "title": "Mine", "order": "9"})
    assert response.status_code == 200 and "already module “inference-and-serving”" in response.content.decode()
    assert Module.objects.get(slug="mine").external_id == "P0.mine.01"


def test_an_import_may_not_take_another_modules_catalog_id(catalog, instructor, admin_user):
    files = transfer.export_module(Module.objects.get(slug="training-at-scale"))
    taken = {name.replace("training-at-scale", "copycat"): text.replace("slug: training-at-scale", "slug: copycat")
             for name, text in files.items() if "/rungs/" not in name}
    for user in (instructor, admin_user):
        with pytest.raises(ImportRefused, match="is already module “training-at-scale”'s"):
            transfer.import_files(taken, user)
    assert not Module.objects.filter(slug="copycat").exists()


def test_a_zip_holding_two_modules_with_one_id_is_refused(world, admin_user):
    files = transfer.export_module(world["module"])
    files.update({name.replace("warm-ups", "warm-ups-again"): text.replace("slug: warm-ups", "slug: warm-ups-again")
                  for name, text in files.items() if name.startswith("basics/warm-ups/") and "/rungs/" not in name})
    with pytest.raises(ImportRefused, match="is already the id of module 'warm-ups'"):
        transfer.import_files(files, admin_user)


def test_the_import_button_says_what_an_import_does(world, editor, admin_user, client):
    client.force_login(editor)
    assert "lands as a draft" in client.get("/author/").content.decode()
    client.force_login(admin_user)
    assert "new published version at once" in client.get("/author/").content.decode()


def test_the_admin_shows_roles_and_their_record_but_changes_them_only_through_the_roles_page(world, admin_user, client):
    client.force_login(admin_user)
    assert "vera" in client.get("/admin/authoring/modulerole/").content.decode()
    assert client.get("/admin/authoring/moduleroleevent/").status_code == 200
    assert client.get("/admin/authoring/modulerole/add/").status_code == 403


def test_an_id_taken_between_the_forms_check_and_the_save_is_a_sentence_not_a_500(catalog, instructor, client, monkeypatch):
    from authoring import forms

    # As if another module took the id just after the form's checks: the database's constraint answers.
    monkeypatch.setattr(forms, "external_id_taken", lambda external_id, exclude_slug=None: None)
    monkeypatch.setattr(Module, "validate_constraints", lambda self, exclude=None: None)
    track = Track.objects.get(slug="llm-systems-frontier")
    client.force_login(instructor)
    response = client.post("/author/modules/new", {"track": track.pk, "slug": "impostor", "external_id": "P10.llm-systems-frontier.02",
                                                   "title": "Impostor", "order": "9"})
    assert response.status_code == 200 and "took this slug or id a moment ago" in response.content.decode()
    assert not Module.objects.filter(slug="impostor").exists() and not ModuleRole.objects.exists()


def test_an_id_taken_between_the_imports_checks_and_its_writes_refuses_the_import(catalog, admin_user, monkeypatch):
    monkeypatch.setattr(transfer, "external_id_taken", lambda external_id, exclude_slug=None: None)  # as if taken just after the checks
    files = transfer.export_module(Module.objects.get(slug="training-at-scale"))
    taken = {name.replace("training-at-scale", "copycat"): text.replace("slug: training-at-scale", "slug: copycat")
             for name, text in files.items() if "/rungs/" not in name}
    with pytest.raises(ImportRefused, match="a moment ago"):
        transfer.import_files(taken, admin_user)
    assert not Module.objects.filter(slug="copycat").exists()
