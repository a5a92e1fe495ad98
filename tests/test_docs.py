"""The documentation tells the truth: its example rung validates, and every
make target, management command and setting it names exists."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w+) file=(\S+)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _example_rung(target: Path) -> Path:
    text = (ROOT / "docs" / "authoring.md").read_text()
    files = FENCE.findall(text)
    assert len(files) >= 8, "the authoring guide's example rung is incomplete"
    rung = target / "07-kv-bytes-per-token"
    for _, name, body in files:
        path = rung / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    return rung


def test_the_guides_example_rung_loads(tmp_path):
    from exercises.loader import read_rung

    rung = read_rung(_example_rung(tmp_path))
    assert rung.meta.slug == "kv-bytes-per-token"
    assert set(rung.wrong_solutions) == {"forgets_values.py", "ignores_dtype.py", "no_validation.py"}


@pytest.mark.docker
def test_the_guides_example_rung_passes_validate_exercises(tmp_path, sandbox_image, settings, warm_grading_pool):
    from io import StringIO

    from django.core.management import call_command

    settings.SANDBOX_IMAGE = sandbox_image
    catalog = tmp_path / "exercises"
    shutil.copytree(ROOT / "exercises" / "llm-systems-frontier", catalog / "llm-systems-frontier", ignore=shutil.ignore_patterns("rungs", "__pycache__"))
    _example_rung(catalog / "llm-systems-frontier" / "inference-and-serving" / "rungs")
    out = StringIO()
    call_command("validate_exercises", "--path", str(catalog), "--json", stdout=out)
    (report,) = __import__("json").loads(out.getvalue())
    assert report["reference_passed"] and report["starter_failed_hidden"]
    assert report["wrong_caught"] == report["wrong_solutions"] == 3
    assert report["wrong_passing_visible"] >= 1


def _all_docs() -> str:
    return "\n".join(path.read_text() for path in DOCS)


def test_every_make_target_named_in_the_docs_exists():
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.MULTILINE))
    named = set(re.findall(r"`make ([a-z][\w-]*)`", _all_docs()))
    assert named, "the docs name no make target"
    assert named <= targets, f"documented but missing from the Makefile: {named - targets}"


def test_every_management_command_named_in_the_docs_exists():
    from django.core.management import get_commands

    named = set(re.findall(r"manage\.py ([a-z_]+)", _all_docs()))
    assert {"load_exercises", "validate_exercises", "grade"} <= named
    assert named <= set(get_commands()), f"documented but missing: {named - set(get_commands())}"


def test_every_environment_variable_the_settings_read_is_documented():
    settings_source = (ROOT / "platform" / "config" / "settings.py").read_text()
    read = set(re.findall(r"env(?:[._]\w+)?\(\s*\"([A-Z][A-Z0-9_]+)\"", settings_source))
    assert "SECRET_KEY" in read and "DATABASE_URL" in read
    operations = (ROOT / "docs" / "operations.md").read_text()
    missing = sorted(name for name in read if f"`{name}`" not in operations)
    assert not missing, f"docs/operations.md does not document {missing}"
