"""Every Markdown field of the catalog takes at most MARKDOWN_MAX_CHARS, says so,
and refuses more with a sentence (issue 55, finding 2): the forms, the
preview, and the files an import or a Check reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django import forms

from authoring.forms import ModuleForm, RungDraftForm
from core.constants import MARKDOWN_MAX_CHARS
from exercises import loader
from exercises.exceptions import CatalogError

pytestmark = pytest.mark.django_db

CAP = f"{MARKDOWN_MAX_CHARS:,}"


@pytest.mark.parametrize(("form_class", "name"), [
    (ModuleForm, "concept_md"), (ModuleForm, "worked_example_md"), (ModuleForm, "reference_md"), (RungDraftForm, "instructions_md"),
])
def test_each_markdown_field_says_its_cap_and_refuses_more(form_class: Any, name: str) -> None:
    field = form_class().fields[name]
    assert f"At most {CAP} characters." in field.help_text
    assert field.clean("a" * MARKDOWN_MAX_CHARS) == "a" * MARKDOWN_MAX_CHARS
    with pytest.raises(forms.ValidationError) as refused:
        field.clean("a" * (MARKDOWN_MAX_CHARS + 1))
    assert any(f"At most {CAP} characters of Markdown (this has {MARKDOWN_MAX_CHARS + 1})" in message for message in refused.value.messages)


def test_the_preview_renders_up_to_the_cap_and_refuses_more_with_a_sentence(client: Any, instructor: Any) -> None:
    client.force_login(instructor)
    response = client.post("/author/preview", {"text": "[a](" * 3000})  # the 12 KB
    assert response.status_code == 200
    response = client.post("/author/preview", {"text": "a" * (MARKDOWN_MAX_CHARS + 1)})
    assert response.status_code == 413
    assert f"Markdown may have at most {CAP}" in response.content.decode()


def test_a_markdown_file_over_the_cap_is_refused_by_name(tmp_path: Path) -> None:
    """Imports, Checks and validate_exercises all read rung and module files through the loader."""
    path = tmp_path / "instructions.md"
    path.write_text("a" * MARKDOWN_MAX_CHARS)
    assert loader._read_text(path) == "a" * MARKDOWN_MAX_CHARS
    path.write_text("a" * (MARKDOWN_MAX_CHARS + 1))
    with pytest.raises(CatalogError, match=rf"instructions\.md: {MARKDOWN_MAX_CHARS + 1:,} characters of Markdown; at most {CAP}"):
        loader._read_text(path)
    code = tmp_path / "reference.py"
    code.write_text("a" * (MARKDOWN_MAX_CHARS + 1))
    assert len(loader._read_text(code)) == MARKDOWN_MAX_CHARS + 1  # code has its own limits
