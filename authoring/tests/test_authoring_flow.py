"""An instructor authors a rung in the browser's forms: draft, Check, publish, export, import."""

from __future__ import annotations

import io
from typing import Any

import pytest

from authoring import services, transfer
from authoring.models import ModuleRole, RungCheck, RungDraft
from exercises.models import Module, Rung, RungVersion, Track
from grader import lifecycle

from .conftest import ADD_RUNG

pytestmark = pytest.mark.django_db

MODULE = {
    "slug": "warm-ups", "external_id": "P0.warm-ups.01", "title": "Warm-ups", "order": "3", "audience": "", "depth": "",
    "summary": "Small things.", "why_it_matters": "", "concept_md": "Adding is **easy**.", "worked_example_md": "", "reference_md": "",
    "next_module_slug": "", "one_liners_text": "a + b\r\nb + a",
}


@pytest.fixture
def track() -> Track:
    return Track.objects.create(slug="basics", title="Basics")


@pytest.fixture
def checks(monkeypatch) -> list[int]:
    """Checks queued after commit, run by the test itself instead of a worker."""
    queued: list[int] = []
    monkeypatch.setattr(lifecycle, "enqueue", lambda kind, pk, queue: queued.append(pk))
    return queued


def _author(client: Any, track: Track, django_capture_on_commit_callbacks: Any, **overrides: str) -> None:
    response = client.post("/author/modules/new", {**MODULE, "track": track.pk})
    assert response.status_code == 302, response.content.decode()[:3000]
    response = client.post("/author/modules/warm-ups/rungs/new", {"rung-slug": "add-two", "rung-title": "Add two numbers"})
    assert response.status_code == 302 and response["Location"] == "/author/modules/warm-ups/rungs/add-two/"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/author/modules/warm-ups/rungs/add-two/", {**ADD_RUNG, "action": "check", **overrides})
    assert response.status_code == 302, response.content.decode()[:3000]


def test_an_instructor_authors_checks_and_publishes_a_rung_that_learners_then_get(
    client, instructor, learner, track, checks, in_process_runner, django_capture_on_commit_callbacks
):
    client.force_login(instructor)
    _author(client, track, django_capture_on_commit_callbacks)
    module = Module.objects.get(slug="warm-ups")
    assert list(ModuleRole.objects.filter(module=module).values_list("user", "role")) == [(instructor.pk, "editor")]
    assert module.one_liners == ["a + b", "b + a"]
    draft = RungDraft.objects.get(slug="add-two")
    assert draft.starter_code == "def add(a, b):\n    raise NotImplementedError\n"  # LF, trailing newline kept
    assert draft.hidden_test_meta["test_zero"] == {"description": "Zero on one side.", "visibility": "after_solve"}

    # Drafts are invisible to learners.
    learner_client = type(client)()
    learner_client.force_login(learner)
    assert learner_client.get("/rungs/add-two/").status_code == 404
    assert not Rung.objects.filter(slug="add-two").exists()

    # Publishing before the Check has run is refused.
    response = client.post("/author/modules/warm-ups/rungs/add-two/publish", follow=True)
    assert "Not published" in response.content.decode()

    assert len(checks) == 1
    check = services.run_check(checks[0], runner=in_process_runner)
    assert check is not None
    assert check.ok, check.facts
    page = client.get("/author/modules/warm-ups/rungs/add-two/").content.decode()
    assert "the reference passes every hidden test" in page and "passed: 2/2 tests passed" in page

    response = client.post("/author/modules/warm-ups/rungs/add-two/publish", follow=True)
    assert "Published version 1" in response.content.decode()
    version = RungVersion.objects.get(rung__slug="add-two")
    assert version.number == 1 and version.hidden_test_meta["test_zero"]["visibility"] == "after_solve"
    assert version.content_hash == check.content_hash
    workspace = learner_client.get("/rungs/add-two/")
    assert workspace.status_code == 200 and "raise NotImplementedError" in workspace.content.decode()
    assert "return a + b" not in workspace.content.decode()  # the reference stays hidden


def test_publishing_is_refused_when_the_check_is_stale_or_failed(
    client, instructor, track, checks, in_process_runner, django_capture_on_commit_callbacks
):
    client.force_login(instructor)
    _author(client, track, django_capture_on_commit_callbacks)
    services.run_check(checks[0], runner=in_process_runner)

    # An edit after the Check makes it stale.
    response = client.post("/author/modules/warm-ups/rungs/add-two/", {**ADD_RUNG, "title": "Add two numbers, again", "action": "save"})
    assert response.status_code == 302
    response = client.post("/author/modules/warm-ups/rungs/add-two/publish", follow=True)
    assert "changed since its last Check" in response.content.decode()
    assert not RungVersion.objects.exists()

    # A reference that fails its own tests: the Check fails, and so does publishing.
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/author/modules/warm-ups/rungs/add-two/", {**ADD_RUNG, "reference_code": "def add(a, b):\n    return a - b\n", "action": "check"})
    check = services.run_check(checks[-1], runner=in_process_runner)
    assert check is not None and not check.ok
    failing = [fact["claim"] for fact in check.facts if not fact["ok"]]
    assert "the reference passes every visible test" in failing
    response = client.post("/author/modules/warm-ups/rungs/add-two/publish", follow=True)
    assert "last Check failed" in response.content.decode()
    assert not RungVersion.objects.exists()


def test_an_alternative_that_fails_a_hidden_test_fails_the_check_and_is_listed_beside_the_wrong_solutions(
    client, instructor, track, checks, in_process_runner, django_capture_on_commit_callbacks
):
    # Issue 58: an independent correct solution must pass; this "alternative" drops negative numbers.
    client.force_login(instructor)
    _author(client, track, django_capture_on_commit_callbacks, **{"alt-1-code": "def add(a, b):\r\n    return a + b if a >= 0 else b\r\n"})
    check = services.run_check(checks[0], runner=in_process_runner)
    assert check is not None and not check.ok
    failing = [fact["claim"] for fact in check.facts if not fact["ok"]]
    assert failing == ["alternatives/builtin_sum.py passes every visible test and every hidden test with seeds 20261130, 1238314499, 645296652"]
    page = client.get("/author/modules/warm-ups/rungs/add-two/").content.decode()
    assert "<caption>Wrong solutions and alternatives</caption>" in page
    assert "<code>wrong/absolute.py</code></td><td>fail a hidden test</td>" in page
    assert "<code>alternatives/builtin_sum.py</code></td><td>pass every test, three seeds</td>" in page
    response = client.post("/author/modules/warm-ups/rungs/add-two/publish", follow=True)
    assert "last Check failed" in response.content.decode()
    # Removed like a wrong solution: an empty file name; the editor shows the one left.
    client.post("/author/modules/warm-ups/rungs/add-two/", {**ADD_RUNG, "alt-1-name": "", "action": "save"})
    assert list(RungDraft.objects.get(slug="add-two").alternatives) == ["swapped.py"]
    assert 'value="swapped.py"' in client.get("/author/modules/warm-ups/rungs/add-two/").content.decode()


def test_a_draft_with_an_undescribed_hidden_test_cannot_be_checked(client, instructor, track, checks, django_capture_on_commit_callbacks):
    client.force_login(instructor)
    _author(client, track, django_capture_on_commit_callbacks, **{"hidden-1-name": ""})
    assert checks == [] and not RungCheck.objects.exists()
    page = client.get("/author/modules/warm-ups/rungs/add-two/").content.decode()
    # In the form's words, next to the hidden tests, with no YAML path.
    assert 'Problem in <a href="#section-hidden_tests">Hidden tests</a>' in page
    assert '<p class="bad field-problem" id="problem-hidden_tests-1">the test test_zero needs a description' in page
    assert "hidden_tests.test_zero" not in page and "rung.yaml" not in page


def test_two_empty_descriptions_are_both_named_in_sentences_next_to_their_rows(client, instructor, track, checks, django_capture_on_commit_callbacks):
    # The page showed pydantic's words for the first empty cell only (issue 59, item 15).
    client.force_login(instructor)
    _author(client, track, django_capture_on_commit_callbacks, **{"hidden-0-description": "", "hidden-1-description": ""})
    assert checks == []
    page = client.get("/author/modules/warm-ups/rungs/add-two/").content.decode()
    for test in ("test_negative_numbers", "test_zero"):
        said = f"the test {test} needs a description in the table under the hidden tests."
        assert f'Problem in <a href="#section-hidden_tests">Hidden tests</a>: {said}' in page, test  # the list at the top
        row = page[page.index(f'value="{test}"'):]
        assert row.index(said) < row.index("</tr>"), test
    assert "String should" not in page and "hidden_tests." not in page


def test_a_rung_authored_in_the_views_round_trips_through_export_and_import_unchanged(
    client, admin_user, instructor, track, checks, in_process_runner, django_capture_on_commit_callbacks
):
    client.force_login(instructor)
    _author(client, track, django_capture_on_commit_callbacks)
    services.run_check(checks[0], runner=in_process_runner)
    client.post("/author/modules/warm-ups/rungs/add-two/publish")
    first = client.get("/author/modules/warm-ups/export.zip").content
    files = transfer.unzip_files(first)
    assert files["basics/warm-ups/rungs/01-add-two/wrong/absolute.py"] == "def add(a, b):\n    return abs(a) + abs(b)\n"
    assert files["basics/warm-ups/concept.md"] == "Adding is **easy**."
    digest = RungVersion.objects.get().content_hash

    Rung.objects.update(current_version=None)
    Track.objects.all().delete()
    Track.objects.create(slug="basics", title="Basics")  # instructors import into existing tracks only
    upload = io.BytesIO(first)
    upload.name = "warm-ups.zip"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/author/import", {"archive": upload}, follow=True)
    assert "Imported 1 module(s), 1 rung(s) as drafts" in response.content.decode()
    assert list(ModuleRole.objects.filter(module__slug="warm-ups").values_list("user", "role")) == [(instructor.pk, "editor")]
    # An instructor's import publishes nothing: the rung is a draft until its Check passes and it is published.
    assert not RungVersion.objects.exists() and not Rung.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/author/modules/warm-ups/rungs/add-two/check")
    services.run_check(checks[-1], runner=in_process_runner)
    client.post("/author/modules/warm-ups/rungs/add-two/publish")
    assert RungVersion.objects.get().content_hash == digest
    assert client.get("/author/modules/warm-ups/export.zip").content == first


def test_a_save_over_a_co_owners_newer_save_is_refused_once(client, instructor, other_instructor, track, django_capture_on_commit_callbacks, checks):
    client.force_login(instructor)
    _author(client, track, django_capture_on_commit_callbacks)
    ModuleRole.objects.create(module=Module.objects.get(slug="warm-ups"), user=other_instructor, role="editor")
    page = client.get("/author/modules/warm-ups/rungs/add-two/").content.decode()
    import re

    opened = re.search(r'name="revision" value="([^"]+)"', page)
    assert opened

    other = type(client)()
    other.force_login(other_instructor)
    revision = re.search(r'name="revision" value="([^"]+)"', other.get("/author/modules/warm-ups/rungs/add-two/").content.decode())
    assert revision
    assert other.post("/author/modules/warm-ups/rungs/add-two/", {**ADD_RUNG, "title": "Theirs", "revision": revision.group(1)}).status_code == 302

    mine = {**ADD_RUNG, "title": "Mine", "revision": opened.group(1)}
    response = client.post("/author/modules/warm-ups/rungs/add-two/", mine)
    assert response.status_code == 200 and "ivan saved this draft after you opened it" in response.content.decode()
    assert RungDraft.objects.get(slug="add-two").title == "Theirs"
    again = re.search(r'name="revision" value="([^"]+)"', response.content.decode())
    assert again and again.group(1) != opened.group(1)
    assert client.post("/author/modules/warm-ups/rungs/add-two/", {**mine, "revision": again.group(1)}).status_code == 302
    assert RungDraft.objects.get(slug="add-two").title == "Mine"
