"""The host's own check of a reported pass (``sandbox.vouch``), without Docker.

A nonce-tagged report is the harness's word. These tests play a harness that
lies, or that has a bug, and say that a pass is believed only when the
report's tests and the job's planned tests bear it out, and that a genuine
pass (GPU checks skipped, parametrized cases, cut long names) always is.
"""

from __future__ import annotations

import textwrap

from hypothesis import given
from hypothesis import strategies as st

from sandbox import errors
from sandbox.jobs import MAX_TEST_NAME, MAX_TESTS, TEST_OUTCOMES, CaseResult, Job, JobResult, planned_tests
from sandbox.report import parse_report
from sandbox.vouch import vouch

TESTS = textwrap.dedent(
    """
    import pytest

    @pytest.fixture
    def test_data():
        return [1, 2, 3]

    def test_first(solution):
        assert solution.f(1) == 2

    @pytest.mark.parametrize("n", [1, 2, 3])
    def test_cases(solution, n):
        assert solution.f(n) == n + 1

    async def test_async(solution):
        assert True

    class TestGrouped:
        def test_in_a_class(self, solution):
            assert True

    def helper():
        return 1
    """
)
PLANNED = ["test_first", "test_cases", "test_async"]


def _job(tests: str = TESTS, mode: str = "submit") -> Job:
    return Job(mode=mode, source="def f(x):\n    return x + 1\n", tests={"test_hidden.py": tests})  # type: ignore[arg-type]


def _passed(*names: str, outcome: str = "passed", **fields: object) -> JobResult:
    return JobResult(outcome="passed", tests=[CaseResult(name=name, outcome=outcome) for name in names], **fields)  # type: ignore[arg-type]


def _contradicted(result: JobResult) -> bool:
    return result.outcome == "infra_error" and result.error_code == errors.REPORT_CONTRADICTED


def test_the_planned_tests_are_the_collected_top_level_functions() -> None:
    assert planned_tests(TESTS) == PLANNED
    assert _job().planned_tests == PLANNED
    assert planned_tests("def test_x(:\n") == []
    assert planned_tests("\x00") == []


def test_a_genuine_pass_is_believed_as_it_is() -> None:
    result = _passed("test_first", "test_cases[1]", "test_cases[2]", "test_cases[3]", "test_async", "test_in_a_class",
                     timings={"run_s": 0.5}, machine={"python": "3.11"})  # fmt: skip
    assert vouch(result, _job()) is result


def test_a_pass_with_a_gpu_check_skipped_is_believed() -> None:
    result = JobResult(
        outcome="passed",
        tests=[CaseResult("test_first", "passed"), CaseResult("test_cases[1]", "skipped"), CaseResult("test_async", "passed")],
    )
    assert vouch(result, _job()) is result


def test_a_pass_that_leaves_out_a_planned_test_is_ours_never_a_pass() -> None:
    result = vouch(_passed("test_first", "test_cases[1]", timings={"run_s": 0.5}), _job())
    assert _contradicted(result), result
    assert result.tests == [] and result.timings == {"run_s": 0.5}
    assert errors.REPORT_CONTRADICTED not in errors.RETRYABLE


def test_a_pass_whose_own_tests_failed_errored_or_timed_out_is_not_believed() -> None:
    for bad in ("failed", "error", "timeout", "bogus"):
        tests = [CaseResult("test_first", "passed"), CaseResult("test_cases[1]", bad), CaseResult("test_async", "passed")]
        assert _contradicted(vouch(JobResult(outcome="passed", tests=tests), _job())), bad


def test_a_pass_with_no_test_or_nothing_passed_is_not_believed() -> None:
    assert _contradicted(vouch(_passed(), _job()))
    assert _contradicted(vouch(_passed(*PLANNED, outcome="skipped"), _job()))
    # Even a job whose files plan nothing (tests only in a class) needs a passed test.
    assert _contradicted(vouch(_passed(), _job("class TestOnly:\n    def test_x(self):\n        pass\n")))


def test_other_outcomes_pass_through_untouched() -> None:
    for outcome in ("failed", "error", "timeout", "memory_limit", "output_limit", "infra_error"):
        result = JobResult(outcome=outcome, tests=[CaseResult("test_first", "passed")])
        assert vouch(result, _job()) is result


def test_a_planned_name_longer_than_the_stored_limit_is_matched_on_what_survives_the_cut() -> None:
    long_name = "test_" + "x" * 300
    tests = f"def {long_name}(solution):\n    pass\n\ndef test_short(solution):\n    pass\n"
    report = {"outcome": "passed", "tests": [{"name": long_name, "outcome": "passed"}, {"name": "test_short", "outcome": "passed"}]}
    parsed = parse_report(report)
    assert len(parsed.tests[0].name) <= MAX_TEST_NAME
    assert vouch(parsed, _job(tests)).outcome == "passed"
    assert _contradicted(vouch(parse_report({**report, "tests": report["tests"][1:]}), _job(tests)))


def test_a_report_cut_at_the_test_cap_before_a_planned_test_is_the_exercises_fault() -> None:
    tests = "import pytest\n\n@pytest.mark.parametrize('n', range(600))\ndef test_many(solution, n):\n    pass\n\ndef test_last(solution):\n    pass\n"
    report = {"outcome": "passed", "tests": [{"name": f"test_many[{n}]", "outcome": "passed"} for n in range(600)] + [{"name": "test_last", "outcome": "passed"}]}
    parsed = parse_report(report)
    assert len(parsed.tests) == MAX_TESTS
    result = vouch(parsed, _job(tests))
    assert (result.outcome, result.error_code) == ("infra_error", errors.REPORT_INFRA)
    assert str(MAX_TESTS) in result.message


reported_tests = st.lists(
    st.tuples(st.sampled_from([*PLANNED, "test_in_a_class", "test_other", "test_cases[7]", "test_first[x]"]), st.sampled_from([*TEST_OUTCOMES, "bogus"])),
    max_size=8,
    unique_by=lambda pair: pair[0],
)


@given(reported_tests)
def test_a_pass_survives_exactly_when_every_planned_test_is_there_and_none_failed(pairs: list[tuple[str, str]]) -> None:
    report = {"outcome": "passed", "tests": [{"name": name, "outcome": outcome} for name, outcome in pairs]}
    result = vouch(parse_report(report), _job())
    # A test with an outcome the report may not hold is dropped when it is parsed.
    kept = [(name, outcome) for name, outcome in pairs if outcome in TEST_OUTCOMES]
    outcomes = [outcome for _, outcome in kept]
    functions = {name.partition("[")[0] for name, _ in kept}
    believable = "passed" in outcomes and all(outcome in ("passed", "skipped") for outcome in outcomes) and set(PLANNED) <= functions
    assert (result.outcome == "passed") == believable, (pairs, result)
    if not believable:
        assert _contradicted(result)
