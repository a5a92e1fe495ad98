"""Every shipped rung is proven in the real sandbox by its reference, starter
and wrong solutions (issue: the module's rungs)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

pytestmark = [pytest.mark.docker]


def test_every_shipped_rung_validates(sandbox_image, settings):
    settings.SANDBOX_IMAGE = sandbox_image
    out = StringIO()
    try:
        call_command("validate_exercises", "--json", stdout=out)
    except CommandError as exc:
        pytest.fail(f"{exc}\n{out.getvalue()}")
    reports = json.loads(out.getvalue())
    assert reports, "no rung was validated"
    for report in reports:
        assert set(report) == {
            "rung", "visible_tests", "hidden_tests", "reference_passed", "starter_failed_hidden",
            "wrong_solutions", "wrong_caught", "wrong_passing_visible",
        }
        assert report["reference_passed"] and report["starter_failed_hidden"], report
        assert report["wrong_solutions"] >= 3 and report["wrong_caught"] == report["wrong_solutions"], report
        assert report["wrong_passing_visible"] >= 1, report


def test_a_rung_whose_reference_fails_is_reported_and_exits_non_zero(sandbox_image, settings, tmp_path):
    import shutil

    settings.SANDBOX_IMAGE = sandbox_image
    root = tmp_path / "exercises"
    source = Path(settings.EXERCISES_DIR) / "llm-systems-frontier"
    shutil.copytree(source, root / "llm-systems-frontier", ignore=shutil.ignore_patterns("__pycache__"))
    rung = next(root.rglob("01-kv-cache-size"))
    (rung / "reference.py").write_text((rung / "wrong" / "forgets_values.py").read_text())
    out = StringIO()
    with pytest.raises(CommandError, match="kv-cache-size"):
        call_command("validate_exercises", "--path", str(root), "--rung", "kv-cache-size", stdout=out)
    assert "[ ] the reference passes every hidden test" in out.getvalue()


def test_grade_command_prints_json_for_a_solution_file(catalog, sandbox_image, settings, tmp_path):
    settings.SANDBOX_IMAGE = sandbox_image
    rung_dir = next(Path(settings.EXERCISES_DIR).rglob("01-kv-cache-size"))
    out = StringIO()
    call_command("grade", "kv-cache-size", str(rung_dir / "reference.py"), "--hidden", "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["outcome"] == "passed"
    assert result["tests"] and all(set(test) == {"name", "outcome", "message"} for test in result["tests"])

    wrong = StringIO()
    with pytest.raises(SystemExit):
        call_command("grade", "kv-cache-size", str(rung_dir / "wrong" / "forgets_values.py"), "--json", stdout=wrong)
    assert json.loads(wrong.getvalue())["outcome"] == "failed"
