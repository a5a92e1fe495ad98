"""Every shipped rung is proven in the real sandbox by its reference, starter
and wrong solutions (issue: the module's rungs)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

pytestmark = [pytest.mark.docker]


@pytest.mark.timeout(1500)
def test_every_shipped_rung_validates(sandbox_image, settings, warm_grading_pool):
    # NOTE: without the mutation analysis, which alone takes minutes for the
    # module on two cores; tests/sandbox/test_mutants.py and the
    # --min-mutation-score test below cover it, and `validate_exercises`
    # (make test's callers, the Check page) runs it.
    settings.SANDBOX_IMAGE = sandbox_image
    out = StringIO()
    try:
        call_command("validate_exercises", "--json", "--no-mutants", stdout=out)
    except CommandError as exc:
        pytest.fail(f"{exc}\n{out.getvalue()}")
    reports = json.loads(out.getvalue())
    assert reports, "no rung was validated"
    for report in reports:
        assert set(report) == {
            "rung", "visible_tests", "hidden_tests", "reference_passed", "starter_failed_hidden",
            "wrong_solutions", "wrong_caught", "wrong_passing_visible", "alternatives", "alternatives_passing",
            "mutants", "killed", "equivalent", "mutation_score", "failing", "warnings", "generated_cases",
        }
        assert report["failing"] == [], report
        assert report["reference_passed"] and report["starter_failed_hidden"], report
        assert report["wrong_solutions"] >= 3 and report["wrong_caught"] == report["wrong_solutions"], report
        assert report["wrong_passing_visible"] >= 1, report
        assert report["alternatives"] >= 2 and report["alternatives_passing"] == report["alternatives"], report
        # Every shipped rung has generator tests (test_generated_*): the guarded run counts their calls.
        assert isinstance(report["generated_cases"], int) and report["generated_cases"] > 0, report
        # Skipped here, and said so: no figure is made up.
        assert (report["mutants"], report["killed"], report["equivalent"], report["mutation_score"]) == (None, None, None, None), report


def test_a_rung_whose_reference_fails_is_reported_and_exits_non_zero(sandbox_image, settings, tmp_path, warm_grading_pool):
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


WEAK_RUNG = {
    "rung.yaml": """\
slug: add-two
title: Add two numbers
minutes: 5
difficulty: easy
limits: {time_s: 10, memory_mb: 1024}
hidden_tests:
  test_doubles: {description: "Two equal numbers."}
  test_zero: {description: "Zero and zero."}
wrong_solutions:
  minus.py: "Subtracts."
  off_by_one.py: "Adds one too many."
  hard_coded.py: "Returns the visible example's answer."
alternatives:
  swapped.py: "Adds in the other order."
  builtin_sum.py: "Uses sum()."
domain:
  add:
    args:
      a: {type: int}
      b: {type: int}
""",
    "instructions.md": "# Add two numbers\n",
    "starter.py": "def add(a, b):\n    raise NotImplementedError\n",
    "reference.py": "def add(a, b):\n    return a + b\n",
    "test_visible.py": "def test_example(solution):\n    assert solution.add(2, 3) == 5\n",
    # Too weak: a * b passes both (2 * 2 == 4, 0 * 0 == 0).
    "test_hidden.py": "def test_doubles(solution):\n    assert solution.add(2, 2) == 4\n\n\ndef test_zero(solution):\n    assert solution.add(0, 0) == 0\n",
    "wrong/minus.py": "def add(a, b):\n    return a - b\n",
    "wrong/off_by_one.py": "def add(a, b):\n    return a + b + 1\n",
    "wrong/hard_coded.py": "def add(a, b):\n    return 5\n",
    "alternatives/swapped.py": "def add(a, b):\n    return b + a\n",
    "alternatives/builtin_sum.py": "def add(a, b):\n    return sum((a, b))\n",
}


def test_the_mutation_score_is_reported_and_judged_only_when_asked(sandbox_image, settings, tmp_path, warm_grading_pool):
    settings.SANDBOX_IMAGE = sandbox_image
    root = _weak_catalog(settings, tmp_path, WEAK_RUNG)
    out = StringIO()
    # Every fact holds: only the score, judged because asked, fails the rung.
    with pytest.raises(CommandError, match="1 rung"):
        call_command("validate_exercises", "--path", str(root), "--min-mutation-score", "0.9", stdout=out)
    text = out.getvalue()
    assert "OK   add-two" in text and "mutation score 0.833: 5 of 6 mutants killed, 0 equivalent, 1 surviving" in text, text
    assert "surviving ReplaceBinaryOperator_Add_Mul-" in text and "+    return a * b" in text


def _weak_catalog(settings: object, tmp_path: Path, files: dict[str, str]) -> Path:
    import shutil

    root = tmp_path / "exercises"
    shutil.copytree(Path(settings.EXERCISES_DIR) / "llm-systems-frontier", root / "llm-systems-frontier", ignore=shutil.ignore_patterns("rungs", "__pycache__"))  # type: ignore[attr-defined]
    rung = root / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-add-two"
    for name, text in files.items():
        (rung / name).parent.mkdir(parents=True, exist_ok=True)
        (rung / name).write_text(text)
    return root


def test_an_undocumented_call_and_a_failing_alternative_fail_validation_and_a_copied_wrong_solution_warns(
    sandbox_image, settings, tmp_path, warm_grading_pool
):
    # Issue 58: a hidden test that calls add(0.5, 0.25) where the domain says ints; an
    # alternative that fails a hidden test; a wrong solution that is the reference itself.
    settings.SANDBOX_IMAGE = sandbox_image
    files = dict(WEAK_RUNG)
    files["rung.yaml"] = files["rung.yaml"].replace(
        '  test_zero: {description: "Zero and zero."}\n', '  test_zero: {description: "Zero and zero."}\n  test_halves: {description: "Halves."}\n'
    ).replace('  builtin_sum.py: "Uses sum()."\n', '  special_case.py: "Special-cases 2."\n').replace(
        '  hard_coded.py: "Returns the visible example\'s answer."\n', '  hard_coded.py: "Returns the visible example\'s answer."\n  same.py: "The reference."\n'
    )
    files["test_hidden.py"] += "\n\ndef test_halves(solution):\n    assert solution.add(0.5, 0.25) == 0.75\n"
    del files["alternatives/builtin_sum.py"]  # one passing alternative is enough here: fewer jobs
    files["alternatives/special_case.py"] = "def add(a, b):\n    return 5 if a == 2 else a + b\n"
    files["wrong/same.py"] = "def add(a, b):\n    # the reference, comments aside\n    return a + b\n"
    out = StringIO()
    with pytest.raises(CommandError, match="add-two"):
        call_command("validate_exercises", "--path", str(_weak_catalog(settings, tmp_path, files)), "--json", "--no-mutants", stdout=out)
    (report,) = json.loads(out.getvalue())
    failing = {item["claim"]: item["evidence"] for item in report["failing"]}
    domain = failing["no hidden test calls the reference outside its declared domain (testing undocumented behaviour)"]
    assert "test_halves: add(0.5, 0.25): argument a=0.5 type float is not int" in domain, domain
    alternative = next(evidence for claim, evidence in failing.items() if claim.startswith("alternatives/special_case.py passes"))
    assert "test_doubles" in alternative, alternative
    assert (report["alternatives"], report["alternatives_passing"]) == (2, 1), report
    assert "wrong/same.py is the reference itself (the same code, comments and layout aside)" in report["warnings"], report
