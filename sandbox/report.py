"""Read what a sandbox container printed: pure functions, no Docker.

Everything here is hostile input. A line counts only if it carries the
job's nonce; a report is a JSON object whose every field is checked,
size-capped and made safe to store: no NUL (PostgreSQL refuses it in text),
no lone surrogate (invalid UTF-8 once encoded). Whatever a line holds,
these functions return a value or None; they never raise.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

from .errors import CONTAINER_TAINTED, HARNESS_CRASHED, REPORT_INFRA, REPORT_INVALID
from .jobs import (
    FAILURE_CODES,
    MAX_BIGINT,
    MAX_STORED_OUTPUT,
    MAX_TEST_MESSAGE,
    MAX_TEST_NAME,
    MAX_TESTS,
    OUTCOMES,
    RERUN_FAILURES,
    SPEED_CLOCKS,
    SPEED_REASONS,
    SPEED_VERDICTS,
    STOP_PLACES,
    TEST_OUTCOMES,
    CaseResult,
    Failure,
    JobResult,
    SpeedFacts,
    truncate,
)

# Longest event line read at all, and deepest nesting decoded.
MAX_EVENT_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 32
# The machine a job ran on (the harness's ``machine.facts``): these keys
# only, each a short single line of text, whatever else the report holds.
MACHINE_KEYS = ("device", "torch", "cuda", "python", "image")
MAX_MACHINE_TEXT = 120
# The GPU a speed phase timed on: its name and its driver's version, each.
MAX_SPEED_LABEL = 80
# A failure's short technical detail (``Failure.detail``); its traceback has MAX_TEST_MESSAGE.
MAX_FAILURE_DETAIL = 300


def clean_text(value: Any, limit: int) -> str:
    """``value`` as text that any database stores: capped, no NUL, valid Unicode."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    text = truncate(text, limit)
    if "\x00" in text:
        text = text.replace("\x00", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates (from "\ud800" escapes): pairs are joined, the rest
        # become U+FFFD.
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _depth_ok(value: Any) -> bool:
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return True


def parse_event(line: bytes, prefix: bytes) -> dict[str, Any] | None:
    """One event from one log line, or None if the line is not a sane event of this job."""
    if not line.startswith(prefix) or len(line) > MAX_EVENT_BYTES:
        return None
    try:
        event = json.loads(line[len(prefix):], parse_int=_small_int)
    except (ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(event, dict) or not _depth_ok(event):
        return None
    return event


def _small_int(text: str) -> int:
    if len(text) > 30:
        raise ValueError("integer too long")
    return int(text)


def seconds(value: Any, default: float = 0.0) -> float:
    """A duration from a report: a finite, non-negative number, else ``default``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else default


def clean_test_name(value: Any, suffix: str = "") -> str:
    """A test's name as stored: clean, and with ``suffix`` at most ``MAX_TEST_NAME`` characters.

    A longer name is cut and marked with "…" (no truncation notice: the
    stored column holds ``MAX_TEST_NAME`` characters, and a notice cut off
    there would leave two long names that differ only at their end equal).
    """
    text = value[: MAX_TEST_NAME * 4] if isinstance(value, str) else value
    name = clean_text(text, MAX_TEST_NAME * 4)
    if len(name) + len(suffix) > MAX_TEST_NAME:
        name = name[: MAX_TEST_NAME - len(suffix) - 1] + "…"
    return name + suffix


def unique_names(tests: list[CaseResult]) -> list[CaseResult]:
    """``tests`` with every name distinct: a repeated name gets ``#2``, ``#3``... (within the length limit).

    Names repeat when two long ones differ only past the stored length (a
    parametrized test with long ids), and the host stores one row per name.
    Refusing the report would make such a rung ungradable, through no fault
    of the learner's: numbering keeps every test visible, in order, and the
    first of them keeps its name. (The harness itself never reports a name
    twice, so an exact repeat only comes from a forged report, which gains
    nothing: a renamed failing test still fails the job.)
    """
    seen: set[str] = set()
    unique: list[CaseResult] = []
    for test in tests:
        name, number = test.name, 1
        while name in seen:
            number += 1
            name = clean_test_name(test.name, f"#{number}")
        seen.add(name)
        unique.append(test if name == test.name else replace(test, name=name))
    return unique


def _small(value: Any, low: int, high: int) -> int | None:
    """An int in ``low..high`` (not a bool), else None."""
    return value if type(value) is int and low <= value <= high else None


def _capped_text(value: Any, limit: int) -> str:
    """Text only (anything else is dropped, not converted), cleaned and capped."""
    return clean_text(value[: limit * 4], limit) if isinstance(value, str) else ""


def parse_failure(data: Any) -> Failure | None:
    """Why the learner's code failed (``Failure``), bounded and cleaned; None when absent or not an object.

    A code the host does not know becomes "unknown"; an exit status outside
    0..255 or a signal outside 1..64 is dropped (unknown), not kept.
    """
    if not isinstance(data, dict):
        return None
    code = data.get("code")
    return Failure(
        code=code if isinstance(code, str) and code in FAILURE_CODES else "unknown",
        status=_small(data.get("status"), 0, 255),
        signal=_small(data.get("signal"), 1, 64),
        traceback=_capped_text(data.get("traceback"), MAX_TEST_MESSAGE),
        detail=" ".join(_capped_text(data.get("detail"), MAX_FAILURE_DETAIL).split()),
    )


def parse_test(data: Any) -> CaseResult | None:
    if not isinstance(data, dict):
        return None
    name = clean_test_name(data.get("name", ""))
    outcome = data.get("outcome")
    if not name or not isinstance(outcome, str) or outcome not in TEST_OUTCOMES:
        return None
    return CaseResult(
        name=name, outcome=outcome, duration_s=seconds(data.get("duration_s")), message=clean_text(data.get("message") or "", MAX_TEST_MESSAGE),
        # A passing test failed nothing: whatever it claims is dropped.
        failure=parse_failure(data.get("failure")) if outcome != "passed" else None,
    )  # fmt: skip


def parse_machine(data: Any) -> dict[str, Any]:
    """The machine facts of a report, bounded and cleaned; {} when absent or not an object.

    Text values only (a number or a list is dropped, not converted), one
    line each, capped; ``gpu`` is kept only as a real boolean.
    """
    if not isinstance(data, dict):
        return {}
    machine: dict[str, Any] = {}
    for key in MACHINE_KEYS:
        value = data.get(key)
        if not isinstance(value, str):
            continue
        text = " ".join(clean_text(value[: MAX_MACHINE_TEXT * 4], MAX_MACHINE_TEXT * 4).split())
        if len(text) > MAX_MACHINE_TEXT:
            text = text[: MAX_MACHINE_TEXT - 3] + "..."
        if text:
            machine[key] = text
    if isinstance(data.get("gpu"), bool):
        machine["gpu"] = data["gpu"]
    return machine


def _positive(value: Any, high: float) -> float | None:
    """A finite number in (0, ``high``], else None (unknown)."""
    if type(value) not in (int, float) or not math.isfinite(value) or not 0 < value <= high:
        return None
    return float(value)


def _label(value: Any) -> str:
    """A device's name or driver version from a report: printable text, one line, capped; else ""."""
    if not isinstance(value, str):
        return ""
    text = "".join(char if char.isprintable() else " " for char in clean_text(value[: MAX_SPEED_LABEL * 4], MAX_SPEED_LABEL * 4))
    text = " ".join(text.split())
    return text if len(text) <= MAX_SPEED_LABEL else text[: MAX_SPEED_LABEL - 3] + "..."


def parse_speed(data: Any) -> SpeedFacts | None:
    """A speed phase's facts, bounded; None when absent or not an object.

    The verdict is believed only as far as the numbers bear it out: a pass
    whose interval's low end is not at or above the target, or a fail whose
    high end is not below it, is no verdict (``ambiguous``).
    """
    if not isinstance(data, dict):
        return None
    verdict = data.get("verdict")
    if not isinstance(verdict, str) or verdict not in SPEED_VERDICTS:
        return None
    reason = data.get("reason")
    target = _positive(data.get("target"), 1e6) or 1.0
    ratio, low, high = (_positive(data.get(key), 1e9) for key in ("ratio", "ci_low", "ci_high"))
    if low is None or high is None or ratio is None or not low <= ratio <= high:
        low = high = ratio = None
    if verdict == "pass" and (low is None or low < target):
        verdict = "ambiguous"
    if verdict == "fail" and (high is None or high >= target):
        verdict = "ambiguous"
    rounds = _small(data.get("rounds"), 0, 100_000)
    confidence = _positive(data.get("confidence"), 1.0)
    return SpeedFacts(
        verdict=verdict,
        reason=reason if isinstance(reason, str) and reason in SPEED_REASONS else "",
        target=target,
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        confidence=confidence if confidence is not None and confidence < 1 else 0.0,
        rounds=rounds or 0,
        learner_s=_positive(data.get("learner_s"), 3600),
        baseline_s=_positive(data.get("baseline_s"), 3600),
        cpu_checked=data.get("cpu_checked") is True,
        phase_s=_positive(data.get("phase_s"), 3600) or 0.0,
        clock=clock if isinstance(clock := data.get("clock"), str) and clock in SPEED_CLOCKS else "",
        device=_label(data.get("device")),
        driver=_label(data.get("driver")),
    )


def _list(value: Any) -> list[Any]:
    return value[:MAX_TESTS] if isinstance(value, list) else []


def _limit(value: Any) -> float:
    """The limit a report says the job hit: a positive number, else 0 (unknown)."""
    if type(value) not in (int, float) or not 0 < value < 1e12:
        return 0.0
    return float(value)


def parse_report(report: dict[str, Any]) -> JobResult:
    outcome = report.get("outcome")
    if not isinstance(outcome, str) or outcome not in OUTCOMES:
        return JobResult(outcome="infra_error", error_code=REPORT_INVALID)
    tests = unique_names([test for test in (parse_test(item) for item in _list(report.get("tests"))) if test is not None])
    peak = report.get("peak_memory_bytes")
    calls = report.get("hidden_calls")
    error_code = ""
    if outcome == "infra_error":
        code = report.get("error_code")
        error_code = code if code in (HARNESS_CRASHED, CONTAINER_TAINTED) else REPORT_INFRA
    return JobResult(
        outcome=outcome,
        message=clean_text(report.get("message") or "", MAX_TEST_MESSAGE),
        tests=tests,
        stdout=clean_text(report.get("stdout") or "", MAX_STORED_OUTPUT),
        stderr=clean_text(report.get("stderr") or "", MAX_STORED_OUTPUT),
        state_leaks=[clean_test_name(name) for name in _list(report.get("state_leaks"))],
        passes_alone=[clean_test_name(name) for name in _list(report.get("passes_alone"))],
        # Beyond what the database holds is no measurement: unknown, as when absent.
        peak_memory_bytes=peak if type(peak) is int and 0 <= peak <= MAX_BIGINT else None,
        error_code=error_code,
        # Unknown means "assume it did": the safe side for what a learner sees.
        hidden_calls_made=not (isinstance(calls, int) and not isinstance(calls, bool) and calls == 0),
        load_error=outcome == "error" and report.get("load_error") is True,
        rerun_failure=rerun if isinstance(rerun := report.get("rerun_failure"), str) and rerun in RERUN_FAILURES else "",
        stopped=stopped if isinstance(stopped := report.get("stopped"), str) and stopped in STOP_PLACES else "",
        limit=_limit(report.get("limit")),
        rerun_replayed=min(replayed, len(tests)) if type(replayed := report.get("rerun_replayed")) is int and replayed > 0 else 0,
        machine=parse_machine(report.get("machine")),
        failure=parse_failure(report.get("failure")) if outcome == "error" else None,
        # Measured only after every test passed: from any other outcome it is a forgery.
        speed=parse_speed(report.get("speed")) if outcome == "passed" else None,
    )
