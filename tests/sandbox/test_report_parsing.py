"""The runner's reading of a container's output, without Docker.

Everything a container prints is hostile: these properties say that no line
and no report, however it is made, raises in the runner or yields a string
the database cannot store.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.jobs import FAILURE_CODES, MAX_STORED_OUTPUT, MAX_TEST_MESSAGE, MAX_TEST_NAME, OUTCOMES, Failure, JobResult
from sandbox.report import MAX_FAILURE_DETAIL, clean_text, parse_event, parse_report

PREFIX = b"@@DOJO 0123abcd "

# Text with the characters that break databases: NUL, lone surrogates, controls.
hostile_text = st.text(alphabet=st.characters(codec=None, blacklist_categories=()), max_size=200) | st.sampled_from(
    ["\x00", "a\x00b", "\ud800", "x\udfffy", "\ud83d\ude00", "\ufffe", "\x1b[31m"]
)
# Integers of at most 19 digits: a line with a longer one is dropped whole
# (test_it_refuses_lines_without_the_nonce_deep_nesting_or_huge_numbers).
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**18), max_value=10**18) | st.floats(allow_nan=False, allow_infinity=False) | hostile_text,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(hostile_text, children, max_size=5),
    max_leaves=30,
)
failures = st.fixed_dictionaries(
    {},
    optional={
        "code": st.sampled_from([*FAILURE_CODES, "pwned", ""]) | json_values,
        "status": st.integers(-(10**6), 10**6) | json_values,
        "signal": st.integers(-100, 100) | json_values,
        "traceback": hostile_text | json_values,
        "detail": hostile_text | json_values,
    },
) | json_values
test_entries = st.fixed_dictionaries(
    {},
    optional={
        "name": json_values | hostile_text,
        "outcome": st.sampled_from(["passed", "failed", "error", "skipped", "timeout", "bogus"]) | json_values,
        "duration_s": json_values,
        "message": json_values | hostile_text,
        "failure": failures,
    },
)
reports = st.fixed_dictionaries(
    {},
    optional={
        "outcome": st.sampled_from([*OUTCOMES, "pwned"]) | json_values,
        "message": json_values | hostile_text,
        "tests": st.lists(test_entries, max_size=5) | json_values,
        "state_leaks": st.lists(json_values, max_size=3) | json_values,
        "stdout": hostile_text | json_values,
        "stderr": hostile_text | json_values,
        "peak_memory_bytes": json_values,
        "hidden_calls": json_values,
        "error_code": json_values,
        "rerun_failure": st.sampled_from(["timeout", "error", "incomplete", "bogus", ""]) | json_values,
        "rerun_replayed": st.integers(-5, 10**6) | json_values,
        "failure": failures,
    },
)


def _storable(text: str, limit: int) -> None:
    assert isinstance(text, str)
    assert "\x00" not in text
    text.encode("utf-8")  # raises on a lone surrogate
    assert len(text) <= limit + 100  # the cap, plus the truncation notice


def _check_failure(failure: Failure | None) -> None:
    if failure is None:
        return
    assert failure.code in FAILURE_CODES
    assert failure.status is None or 0 <= failure.status <= 255
    assert failure.signal is None or 1 <= failure.signal <= 64
    _storable(failure.traceback, MAX_TEST_MESSAGE)
    _storable(failure.detail, MAX_FAILURE_DETAIL)


def _check(result: JobResult) -> None:
    assert result.outcome in OUTCOMES
    _storable(result.message, MAX_TEST_MESSAGE)
    _check_failure(result.failure)
    _storable(result.stdout, MAX_STORED_OUTPUT)
    _storable(result.stderr, MAX_STORED_OUTPUT)
    for test in result.tests:
        _storable(test.name, MAX_TEST_NAME)
        assert len(test.name) <= MAX_TEST_NAME  # the column's size: no truncation notice past it
        _storable(test.message, MAX_TEST_MESSAGE)
        _check_failure(test.failure)
        assert test.duration_s >= 0
    for name in result.state_leaks:
        _storable(name, MAX_TEST_NAME)
    assert len({test.name for test in result.tests}) == len(result.tests)  # one stored row per name
    assert result.peak_memory_bytes is None or 0 <= result.peak_memory_bytes <= 2**63 - 1
    assert result.rerun_failure in ("", "timeout", "error", "incomplete")
    assert type(result.rerun_replayed) is int and 0 <= result.rerun_replayed <= len(result.tests)


@settings(max_examples=300, deadline=None)
@given(reports)
def test_it_turns_any_report_into_a_storable_result(report: dict[str, Any]) -> None:
    _check(parse_report(report))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_it_never_raises_on_any_line(tail: bytes) -> None:
    event = parse_event(PREFIX + tail, PREFIX)
    assert event is None or isinstance(event, dict)


@settings(max_examples=200, deadline=None)
@given(reports)
def test_it_reads_a_report_line_whatever_it_holds(report: dict[str, Any]) -> None:
    line = PREFIX + json.dumps({"event": "report", **report}).encode()
    event = parse_event(line, PREFIX)
    assert event is not None
    _check(parse_report(event))


def test_it_strips_nul_and_replaces_lone_surrogates() -> None:
    result = parse_report(
        {"outcome": "failed", "message": "a\x00b\ud800c", "stdout": "\x00" * 10, "tests": [{"name": "t\x00x", "outcome": "failed", "message": "\udcff"}]}
    )
    assert result.message == "ab\ufffdc"
    assert result.stdout == ""
    assert result.tests[0].name == "tx"
    assert result.tests[0].message == "\ufffd"
    assert clean_text("\ud83d\ude00", 10) == "\U0001f600"  # a valid pair is joined, not replaced


def test_it_refuses_lines_without_the_nonce_deep_nesting_or_huge_numbers() -> None:
    assert parse_event(b"@@DOJO other " + b'{"event":"report","outcome":"passed"}', PREFIX) is None
    assert parse_event(PREFIX + b"[" * 100_000 + b"]" * 100_000, PREFIX) is None
    assert parse_event(PREFIX + b'{"event":"report","x":' + b"[" * 40 + b"]" * 40 + b"}", PREFIX) is None
    assert parse_event(PREFIX + b'{"event":"report","peak_memory_bytes":' + b"9" * 5000 + b"}", PREFIX) is None
    assert parse_event(PREFIX + b'{"event":"report","outcome":"passed"}', PREFIX) == {"event": "report", "outcome": "passed"}


def test_an_unknown_outcome_is_our_error_and_never_a_pass() -> None:
    for outcome in ("PASSED", "pass", None, 1, ["passed"], {"passed": True}):
        result = parse_report({"outcome": outcome, "tests": [{"name": "t", "outcome": "passed"}]})
        assert result.outcome == "infra_error"
        assert result.error_code == "report_invalid"


def test_hidden_calls_are_assumed_unless_the_report_says_none() -> None:
    assert parse_report({"outcome": "error", "hidden_calls": 0}).hidden_calls_made is False
    for calls in (1, None, "0", True, False, 0.0, -1):
        assert parse_report({"outcome": "error", "hidden_calls": calls}).hidden_calls_made is True


def test_the_replayed_count_is_a_count_of_the_reports_tests() -> None:
    tests = [{"name": f"t{n}", "outcome": "passed"} for n in range(3)]
    assert parse_report({"outcome": "passed", "tests": tests, "rerun_replayed": 2}).rerun_replayed == 2
    assert parse_report({"outcome": "passed", "tests": tests, "rerun_replayed": 10**12}).rerun_replayed == 3
    for junk in (True, -1, 2.0, "2", None, [2]):
        assert parse_report({"outcome": "passed", "tests": tests, "rerun_replayed": junk}).rerun_replayed == 0


def test_long_names_that_differ_only_past_the_limit_stay_distinct() -> None:
    long = "test_" + "a" * 300
    names = [test.name for test in parse_report({"outcome": "failed", "tests": [{"name": long + str(n), "outcome": "failed"} for n in range(3)]}).tests]
    assert names[0] == long[: MAX_TEST_NAME - 1] + "…"
    assert names[1:] == [long[: MAX_TEST_NAME - 3] + "…#2", long[: MAX_TEST_NAME - 3] + "…#3"]
    assert all(len(name) == MAX_TEST_NAME for name in names)


def test_repeated_names_are_numbered_in_order_and_never_collide() -> None:
    tests = [{"name": name, "outcome": "passed"} for name in ("test_x", "test_x#2", "test_x", "test_x", "test_y")]
    names = [test.name for test in parse_report({"outcome": "passed", "tests": tests}).tests]
    assert names == ["test_x", "test_x#2", "test_x#3", "test_x#4", "test_y"]


def test_a_long_state_leak_names_the_test_as_stored() -> None:
    long = "test_" + "b" * 300
    result = parse_report({"outcome": "failed", "tests": [{"name": long, "outcome": "failed"}], "state_leaks": [long]})
    assert result.state_leaks == [result.tests[0].name]


def test_a_peak_memory_the_database_cannot_hold_is_unknown() -> None:
    assert parse_report({"outcome": "failed", "peak_memory_bytes": 2**63 - 1}).peak_memory_bytes == 2**63 - 1
    for peak in (2**63, 10**29, -1, True, 1.5, "12"):
        assert parse_report({"outcome": "failed", "peak_memory_bytes": peak}).peak_memory_bytes is None
    # A 30-digit number still reads (the line is not dropped); only the peak is unknown.
    event = parse_event(PREFIX + b'{"event":"report","outcome":"failed","peak_memory_bytes":' + b"9" * 30 + b"}", PREFIX)
    assert event is not None and parse_report(event).peak_memory_bytes is None


def test_a_limit_is_reported_as_facts_and_nothing_else_is_believed():
    stopped = parse_report({"outcome": "timeout", "stopped": "loading", "limit": 4})
    assert (stopped.stopped, stopped.limit, stopped.message) == ("loading", 4.0, "")
    leaky = parse_report({"outcome": "failed", "state_leaks": ["test_a", "test_b"], "passes_alone": ["test_a", 7]})
    assert (leaky.state_leaks, leaky.passes_alone[0]) == (["test_a", "test_b"], "test_a")
    odd = [("somewhere", "4", ""), ("Loading", -1, ""), (["loading"], True, ""), ("results", float("nan"), "results"), (None, 1e300, "")]
    for place, limit, believed in odd:
        result = parse_report({"outcome": "memory_limit", "stopped": place, "limit": limit})
        assert (result.stopped, result.limit) == (believed, 0.0)


def test_a_failure_is_read_as_facts_bounded_and_an_unknown_code_named_unknown() -> None:
    report = {
        "outcome": "error",
        "failure": {"code": "learner_died", "signal": 9, "status": 300, "traceback": "Traceback\x00" + "x" * 10**5, "detail": "a\n\nb " * 500},
        "tests": [
            {"name": "test_a", "outcome": "failed", "message": "ValueError: no", "failure": {"code": "raised", "traceback": "File solution.py"}},
            {"name": "test_b", "outcome": "error", "failure": {"code": "rm -rf", "status": True, "signal": 0}},
            {"name": "test_c", "outcome": "passed", "failure": {"code": "load_error"}},
            {"name": "test_d", "outcome": "failed", "failure": ["load_error"]},
        ],
    }
    result = parse_report(report)
    assert result.failure is not None
    assert (result.failure.code, result.failure.signal, result.failure.status) == ("learner_died", 9, None)
    assert "\x00" not in result.failure.traceback and len(result.failure.traceback) <= MAX_TEST_MESSAGE + 100
    assert len(result.failure.detail) <= MAX_FAILURE_DETAIL and "\n" not in result.failure.detail
    a, b, c, d = result.tests
    assert a.failure == Failure("raised", traceback="File solution.py") and a.message == "ValueError: no"
    assert b.failure == Failure("unknown")
    assert c.failure is None and d.failure is None  # a pass failed nothing; a record must be an object
    # Only an error outcome carries a job-level failure.
    assert parse_report({**report, "outcome": "failed"}).failure is None
