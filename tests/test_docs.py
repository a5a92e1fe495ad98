"""The documentation tells the truth: its example rung validates, and every
make target, management command and setting it names exists."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

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


def test_the_sizing_section_quotes_the_committed_bench_results():
    """docs/operations.md's sizing is written from bench/results.json (``make bench`` rewrites both)."""
    import json

    from bench.sizing import BEGIN, END, render

    results = json.loads((ROOT / "bench" / "results.json").read_text())
    guide = (ROOT / "docs" / "operations.md").read_text()
    assert guide.count(BEGIN) == 1 and guide.count(END) == 1, "the sizing markers are missing"
    written = guide.split(BEGIN + "\n", 1)[1].split("\n" + END, 1)[0]
    assert written == render(results), "docs/operations.md's sizing is stale: run `.venv/bin/python -m bench.sizing`"
    assert f"{results['burst_per_min']} jobs a minute" in written


def test_the_scale_section_quotes_the_committed_scale_results():
    """docs/operations.md's "A year of data" is written from bench/scale-results.json (``make bench-scale`` rewrites both)."""
    import json

    from bench.sizing import SCALE_BEGIN, SCALE_END, render_scale, rewrite_scale, written

    results = json.loads((ROOT / "bench" / "scale-results.json").read_text())
    guide = (ROOT / "docs" / "operations.md").read_text()
    assert guide.count(SCALE_BEGIN) == 1 and guide.count(SCALE_END) == 1, "the scale markers are missing"
    assert written(guide, SCALE_BEGIN, SCALE_END) == render_scale(results), (
        "docs/operations.md's scale figures differ from bench/scale-results.json: run `.venv/bin/python -m bench.sizing`"
    )
    year = results["scales"][-1]
    assert f"{year['rows']['submissions']:,} submissions" in guide
    # A figure that moves in the JSON moves the section: the guide no longer agrees.
    year["pages"]["workspace"]["p95_ms"] += 1000
    assert rewrite_scale(guide, results) != guide


# Where a dotted name can be imported from: the repository, platform/ (config)
# and the harness's own root inside the image (sandbox/harness: dojo_harness).
IMPORT_ROOTS = [ROOT, ROOT / "platform", ROOT / "sandbox" / "harness"]
# A reference to code in the docs, in backticks: a repository path to a Python
# file (`grader/results.py`), optionally with `:name` (`grader/results.py:present`),
# or followed by the names it holds in parentheses (`grader/results.py` (`present`)),
# or a dotted name whose first part is one of the project's packages
# (`grader.results.present`), or a model label (`mentor.Passage`, in the app's
# models.py). Other dotted names (`torch.version.cuda`) are not ours, nor are
# system check ids (`grader.E003`) or file names (`config.json`).
PATH_REF = re.compile(r"`((?:[a-z_][\w-]*/)+[\w-]+\.py)(?::([A-Za-z_][\w.]*))?`(?: \(((?:`[^`]+`(?:\(\))?[^`)]*)+)\))?")
DOTTED_REF = re.compile(r"`([a-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?`")
CHECK_ID = re.compile(r"[EW]\d{3}$")
FILE_SUFFIXES = {"json", "yaml", "yml", "toml", "ini", "txt", "md", "py", "html", "js", "css", "sh", "cfg"}
NAME = re.compile(r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:\(\))?`")


def _bound_names(body: list[Any]) -> set[str]:
    import ast

    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(target.id for target in targets if isinstance(target, ast.Name))
        elif isinstance(node, (ast.If, ast.Try)):
            names |= _bound_names(node.body) | _bound_names(getattr(node, "orelse", []))
    return names


def _resolves_in(path: Path, dotted: str) -> bool:
    """``dotted`` (``name`` or ``Class.method``) is bound at the top of ``path``, or in that class."""
    import ast

    body = ast.parse(path.read_text()).body
    first, _, rest = dotted.partition(".")
    if first not in _bound_names(body):
        return False
    if not rest:
        return True
    classes = [node for node in body if isinstance(node, ast.ClassDef) and node.name == first]
    return bool(classes) and rest.split(".")[0] in _bound_names(classes[0].body)


def _module_file(parts: list[str]) -> Path | None:
    for root in IMPORT_ROOTS:
        base = root.joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _project_packages() -> set[str]:
    return {init.parent.name for root in IMPORT_ROOTS for init in root.glob("*/__init__.py")}


def _broken_references(text: str) -> list[str]:
    broken = []
    for match in PATH_REF.finditer(text):
        path, after_colon, listed = match.groups()
        file = ROOT / path
        if not file.is_file():
            broken.append(f"{path} (no such file)")
            continue
        names = [after_colon] if after_colon else NAME.findall(listed or "")
        broken += [f"{path}: {name}" for name in names if not _resolves_in(file, name)]
    packages = _project_packages()
    for dotted in DOTTED_REF.findall(text):
        parts = dotted.split(".")
        if parts[0] not in packages or CHECK_ID.match(parts[-1]) or parts[-1] in FILE_SUFFIXES:
            continue
        if len(parts) == 2 and parts[1][0].isupper() and _module_file([parts[0], "models"]):
            parts = [parts[0], "models", parts[1]]  # a model label
        # The longest prefix that is a module, then a name (or Class.name) in it.
        for cut in range(len(parts), 0, -1):
            module = _module_file(parts[:cut])
            if module is not None:
                break
        if module is None or (cut < len(parts) and not _resolves_in(module, ".".join(parts[cut:]))):
            broken.append(dotted)
    return broken


def test_the_reference_syntax_catches_a_missing_function():
    text = "`grader/results.py` (`present`, `no_such_function`), `grader/results.py:present`, `grader.results.gone`, `gone/file.py`, `torch.version.cuda`, `grader.E003`, `mentor.Passage`, `mentor.Gone`"
    assert _broken_references(text) == ["grader/results.py: no_such_function", "gone/file.py (no such file)", "grader.results.gone", "mentor.Gone"]


def test_every_function_and_file_the_docs_name_exists():
    broken = {path.name: found for path in DOCS if (found := _broken_references(path.read_text()))}
    assert not broken, f"the docs name code that does not exist: {broken}"


def test_the_readme_layout_table_lists_every_top_level_folder():
    import subprocess

    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split("\n")
    folders = {line.split("/")[0] for line in tracked if "/" in line and not line.startswith(".")}
    readme = (ROOT / "README.md").read_text()
    listed = set(re.findall(r"^\| `([\w.-]+)/`", readme, re.MULTILINE))
    assert listed, "the README has no layout table"
    assert not folders - listed, f"top-level folders missing from the README's layout table: {sorted(folders - listed)}"
