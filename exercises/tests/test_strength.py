"""Test strength (issue 58, item 4): the domain guard counts each hidden test's calls
of the solution, the counts come back from the guarded run, and the shipped
figures in strength.json belong to the rungs' current content."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import pytest

from exercises.constants import CHECK_SEEDS
from exercises.domain_guard import COUNTS_TEST, Guard, domain_test_source, parse_counts
from exercises.loader import read_catalog
from exercises.models import Rung
from exercises.strength import FIGURES, STRENGTH_FILE, complete, read_shipped_strength, record_shipped_strength, strength_from_summary
from exercises.validation import RungReport, RungSource, _domain_facts
from sandbox.jobs import CaseResult
from sandbox.testing import job_result

CATALOG = Path(__file__).resolve().parents[1]
DOMAIN = {"double": {"args": {"n": {"type": "int", "otherwise": "ValueError"}}}}


def _double(n: int) -> int:
    if type(n) is not int:
        raise ValueError("n must be an int")
    return 2 * n


def test_the_guard_counts_each_tests_calls_of_the_solution_and_sums_the_generators(monkeypatch: pytest.MonkeyPatch) -> None:
    reference = types.SimpleNamespace(double=_double)
    guard = Guard(DOMAIN, reference)
    solution = guard.wrap_solution(reference)
    guard.wrap_reference(reference)
    for test, calls in (("test_named_case", 3), ("test_generated_doubles", 40), ("test_generated_bad_input", 5)):
        monkeypatch.setenv("PYTEST_CURRENT_TEST", f"test_hidden.py::{test} (call)")
        for n in range(calls):
            expected = reference.double(n)  # the reference's own calls are not cases
            assert solution.double(n) == expected
    assert guard.calls == {"test_named_case": 3, "test_generated_doubles": 40, "test_generated_bad_input": 5}
    assert guard.case_counts() == {"generated": 45, "calls": {"test_generated_doubles": 40, "test_generated_bad_input": 5}}
    assert parse_counts(f"AssertionError: {guard.counts_line()}") == guard.case_counts()
    assert parse_counts("AssertionError: assert 1 == 2") is None
    assert f"def {COUNTS_TEST}():" in domain_test_source("def test_a(solution):\n    pass\n", DOMAIN)


def _source() -> RungSource:
    return RungSource(slug="double", visible_tests="", hidden_tests="", reference="", starter="", wrong_solutions={}, limits={}, gpu="no",
                      domain=DOMAIN)


def _guarded(*tests: CaseResult) -> dict[tuple[str, str, int], Any]:
    outcome = "passed" if all(test.outcome == "passed" for test in tests) else "failed"
    return {("reference", "domain", CHECK_SEEDS[0]): job_result(outcome, list(tests))}


def test_validation_reads_the_generated_cases_and_the_counting_tests_failure_fails_nothing() -> None:
    counts = CaseResult(name=COUNTS_TEST, outcome="failed", message='AssertionError: dojo case counts: {"calls": {"test_generated_x": 12}, "generated": 12}')
    report = RungReport(rung="double")
    _domain_facts(_source(), _guarded(CaseResult(name="test_a", outcome="passed"), counts), report)
    assert report.generated_cases == 12 and report.facts[-1].ok, report.facts
    assert "1 hidden tests ran" in report.facts[-1].evidence
    # Another test failing still fails the fact; a run that reported no counts has none.
    report = RungReport(rung="double")
    _domain_facts(_source(), _guarded(CaseResult(name="test_a", outcome="failed", message="assert False"), counts), report)
    assert not report.facts[-1].ok
    report = RungReport(rung="double")
    _domain_facts(_source(), _guarded(CaseResult(name="test_a", outcome="passed")), report)
    assert report.generated_cases is None and report.facts[-1].ok


def test_a_summary_missing_a_figure_gives_no_figures() -> None:
    summary = {"hidden_tests": 23, "generated_cases": 440, "wrong_solutions": 16, "wrong_caught": 16, "alternatives": 2,
               "alternatives_passing": 2, "mutation_score": 1.0}
    assert strength_from_summary(summary)["generated"] == 440
    assert strength_from_summary({**summary, "mutation_score": None}) == {}  # mutants skipped
    assert strength_from_summary({**summary, "generated_cases": None}) == {}  # no domain, or no counts came back


def test_every_shipped_figure_belongs_to_its_rungs_current_content() -> None:
    """strength.json is written by ``validate_exercises --write-strength``: rerun it for a rung whose content changed."""
    shipped = read_shipped_strength(CATALOG)
    hashes = {rung.meta.slug: rung.content_hash for track in read_catalog(CATALOG) for module in track.modules for rung in module.rungs}
    for slug, entry in shipped.items():
        assert slug in hashes, f"{STRENGTH_FILE}: no rung {slug}"
        assert entry["content_hash"] == hashes[slug], (
            f"{STRENGTH_FILE}: {slug} changed since its figures were measured; run "
            f"manage.py validate_exercises --rung {slug} --write-strength"
        )
        assert complete(entry["figures"]) and set(entry["figures"]) == set(FIGURES), entry


@pytest.mark.django_db
def test_loading_records_only_figures_measured_on_the_current_content(catalog: Any, tmp_path: Path) -> None:
    rung = Rung.objects.select_related("current_version").get(slug="kv-cache-size")
    assert rung.current_version is not None
    figures = {"named": 23, "generated": 440, "wrong": 16, "wrong_caught": 16, "alternatives": 2, "alternatives_passing": 2, "mutation_score": 1.0}
    entries = {"kv-cache-size": {"content_hash": rung.current_version.content_hash, "figures": figures},
               "training-memory": {"content_hash": "0" * 64, "figures": figures}}
    (tmp_path / STRENGTH_FILE).write_text(json.dumps(entries))
    assert record_shipped_strength(tmp_path) == ["kv-cache-size"]
    assert record_shipped_strength(tmp_path) == []  # idempotent
    rung.current_version.refresh_from_db()
    assert rung.current_version.strength == figures
    other = Rung.objects.select_related("current_version").get(slug="training-memory").current_version
    assert other is not None and other.strength == {}  # measured on other content: no figures
