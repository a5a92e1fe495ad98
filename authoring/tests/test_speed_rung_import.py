"""A non-admin's import lands as drafts, and a draft carries a speed-graded rung whole
(issue 60): a new or changed speed rung becomes a draft with its speed section and its
files (speed_inputs.py, baseline.py), which its Check times and its Publish keeps; an
unchanged one goes through, and an admin's import publishes it whole."""

from __future__ import annotations

from typing import Any

import pytest

from authoring import services, transfer
from authoring.models import ModuleRole, RungDraft
from exercises.models import Module, Rung

FOLDER = "llm-systems-frontier/inference-and-serving/rungs/08-batched-kv-gather/"


@pytest.fixture
def serving(catalog: Any, instructor: Any) -> Module:
    module = Module.objects.get(slug="inference-and-serving")
    ModuleRole.objects.create(module=module, user=instructor, role="editor")
    return module


def _export_with_a_changed_speed_rung(module: Module) -> dict[str, str]:
    files = transfer.export_module(module)
    files[f"{FOLDER}instructions.md"] += "\nOne more note.\n"
    return files


def test_an_editors_import_of_a_changed_speed_rung_lands_as_a_draft_with_its_speed_section_and_files(serving, instructor):
    files = _export_with_a_changed_speed_rung(serving)
    transfer.import_files(files, instructor)
    draft = RungDraft.objects.get(slug="batched-kv-gather")
    published = Rung.objects.get(slug="batched-kv-gather").current_version
    assert published is not None and draft.instructions_md.endswith("One more note.\n")
    assert draft.speed == {"section": published.speed["section"], "files": published.speed["files"]}
    assert set(draft.speed["files"]) == {"speed_inputs.py", "baseline.py"}
    # Read back as its Check reads it: the speed phase the version's job carries, and exactly the zip's rung.
    built = services.build_draft(draft)
    assert built.speed_payload == published.speed_payload
    zipped = {name.removeprefix(FOLDER): text for name, text in files.items() if name.startswith(FOLDER)}
    assert built.content_hash == transfer.read_rung_files(zipped, "batched-kv-gather", 8).content_hash


def test_an_editors_import_with_the_speed_rung_unchanged_goes_through(serving, instructor):
    transfer.import_files(transfer.export_module(serving), instructor)
    assert not RungDraft.objects.filter(slug="batched-kv-gather").exists()


def test_an_admins_import_publishes_the_changed_speed_rung_with_its_speed_phase(serving, admin_user):
    before = Rung.objects.get(slug="batched-kv-gather").current_version
    transfer.import_files(_export_with_a_changed_speed_rung(serving), admin_user)
    current = Rung.objects.get(slug="batched-kv-gather").current_version
    assert before is not None and current is not None
    assert current.number == before.number + 1
    assert current.speed_payload == before.speed_payload and current.speed["section"] == before.speed["section"]


def test_a_draft_opened_from_a_speed_rung_is_the_published_rung_and_exports_it_whole(serving):
    rung = Rung.objects.select_related("current_version").get(slug="batched-kv-gather")
    draft = services.draft_from_version(serving, rung)
    assert rung.current_version is not None
    # Unchanged: nothing to publish, and a Check of it times the same speed phase.
    assert services.build_draft(draft).content_hash == rung.current_version.content_hash
    assert services.draft_state(draft)["unchanged"]
    files = services.draft_files(draft)
    assert files["baseline.py"] == rung.current_version.speed["files"]["baseline.py"]
    assert "speed:" in files["rung.yaml"] and "min_ratio" not in files["rung.yaml"]
