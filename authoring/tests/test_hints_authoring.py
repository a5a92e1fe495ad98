"""Hints in the browser editor and in the files: written, checked, exported and imported unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from authoring import transfer
from authoring.forms import join_hints, split_hints
from authoring.models import RungDraft
from exercises.loader import read_module
from exercises.models import Rung, RungVersion, Track
from grader import lifecycle

from .conftest import ADD_RUNG
from .test_authoring_flow import MODULE, _author

pytestmark = pytest.mark.django_db


@pytest.fixture
def checks(monkeypatch) -> list[int]:
    """Checks queued after commit, run by the test itself."""
    queued: list[int] = []
    monkeypatch.setattr(lifecycle, "enqueue", lambda kind, pk, queue: queued.append(pk))
    return queued

HINTS_BOX = "Think about the signs.\r\n---\r\nWhat does `a + b` give for $a = -2$?\r\n\r\nTry it.\r\n---\r\n\r\n---\r\nJust add them.\r\n"


def test_split_and_join_are_inverse_and_drop_empty_hints():
    hints = split_hints(HINTS_BOX)
    assert hints == ["Think about the signs.", "What does `a + b` give for $a = -2$?\n\nTry it.", "Just add them."]
    assert split_hints(join_hints(hints)) == hints
    assert split_hints("") == [] and split_hints("---\n---") == []


def test_hints_written_in_the_editor_are_saved_published_and_exported(
    client, instructor, django_capture_on_commit_callbacks, checks, in_process_runner
):
    from authoring import services

    client.force_login(instructor)
    track = Track.objects.create(slug="basics", title="Basics")
    _author(client, track, django_capture_on_commit_callbacks, hints_text=HINTS_BOX)
    draft = RungDraft.objects.get(slug="add-two")
    assert draft.hints == split_hints(HINTS_BOX)
    page = client.get("/author/modules/warm-ups/rungs/add-two/").content.decode()
    assert "Hints, in order (Markdown)" in page and "Just add them." in page

    services.run_check(checks[-1], runner=in_process_runner)
    assert "Published version 1" in client.post("/author/modules/warm-ups/rungs/add-two/publish", follow=True).content.decode()
    assert RungVersion.objects.get().hints == draft.hints

    exported = client.get(f"/author/modules/{MODULE['slug']}/export.zip").content
    rung_yaml = yaml.safe_load(transfer.unzip_files(exported)["basics/warm-ups/rungs/01-add-two/rung.yaml"])
    assert rung_yaml["hints"] == draft.hints
    digest = RungVersion.objects.get().content_hash
    Rung.objects.update(current_version=None)
    Track.objects.all().delete()
    Track.objects.create(slug="basics", title="Basics")
    transfer.import_files(transfer.unzip_files(exported), instructor)
    # An instructor's import lands as a draft (published through a Check), holding the same content.
    imported = RungDraft.objects.get(slug="add-two")
    assert not RungVersion.objects.exists()
    assert imported.hints == draft.hints and services.build_draft(imported).content_hash == digest


def test_too_many_or_too_long_hints_are_refused_with_the_reason(client, instructor, django_capture_on_commit_callbacks):
    client.force_login(instructor)
    track = Track.objects.create(slug="basics", title="Basics")
    _author(client, track, django_capture_on_commit_callbacks)
    editor = "/author/modules/warm-ups/rungs/add-two/"
    response = client.post(editor, {**ADD_RUNG, "action": "save", "hints_text": "\n---\n".join(f"hint {n}" for n in range(6))})
    assert response.status_code == 200 and "6 hints: at most 5." in response.content.decode()
    response = client.post(editor, {**ADD_RUNG, "action": "save", "hints_text": "x" * 1001})
    assert "Hint 1 has 1001 characters: at most 1000." in response.content.decode()
    assert RungDraft.objects.get(slug="add-two").hints == []


def test_a_rung_without_hints_exports_no_hints_key(catalog):
    version = Rung.objects.get(slug="kv-cache-size").current_version
    assert version is not None
    version.hints = []
    assert "hints" not in yaml.safe_load(transfer.rung_files(version, "kv-cache-size")["rung.yaml"])


def test_the_shipped_hints_come_back_from_an_export_as_written(catalog, admin_user, client, settings):
    shipped = read_module(Path(settings.EXERCISES_DIR) / "llm-systems-frontier" / "inference-and-serving")
    client.force_login(admin_user)
    files = transfer.unzip_files(client.get("/author/modules/inference-and-serving/export.zip").content)
    for rung_files in shipped.rungs:
        exported = yaml.safe_load(files[f"llm-systems-frontier/inference-and-serving/rungs/{rung_files.path.name}/rung.yaml"])
        assert exported["hints"] == list(rung_files.meta.hints), rung_files.meta.slug
