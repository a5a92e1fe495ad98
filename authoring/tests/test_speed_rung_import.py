"""A non-admin's import lands as drafts, which cannot hold a speed section yet:
a new or changed speed-graded rung is refused with a sentence, never stored
without its speed phase (issue 60); an unchanged one goes through, and an
admin's import publishes it whole."""

from __future__ import annotations

from typing import Any

import pytest

from authoring import transfer
from authoring.exceptions import ImportRefused
from authoring.messages import SPEED_RUNG_ADMIN_IMPORT
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


def test_an_editors_import_of_a_changed_speed_rung_is_refused_with_a_sentence(serving, instructor):
    with pytest.raises(ImportRefused) as refused:
        transfer.import_files(_export_with_a_changed_speed_rung(serving), instructor)
    assert SPEED_RUNG_ADMIN_IMPORT in str(refused.value) and "batched-kv-gather" in str(refused.value)
    assert not RungDraft.objects.filter(slug="batched-kv-gather", rung__isnull=False).exclude(instructions_md="").filter(
        instructions_md__endswith="One more note.\n").exists()


def test_an_editors_import_with_the_speed_rung_unchanged_goes_through(serving, instructor):
    transfer.import_files(transfer.export_module(serving), instructor)


def test_an_admins_import_publishes_the_changed_speed_rung_with_its_speed_phase(serving, admin_user):
    before = Rung.objects.get(slug="batched-kv-gather").current_version
    transfer.import_files(_export_with_a_changed_speed_rung(serving), admin_user)
    current = Rung.objects.get(slug="batched-kv-gather").current_version
    assert before is not None and current is not None
    assert current.number == before.number + 1
    assert current.speed_payload == before.speed_payload and current.speed["section"] == before.speed["section"]
