"""Every sentence a learner reads about a grade, in one place.

Two families with stable ids: the learner's (shown as they are) and ours
(infrastructure: retried, alerted, never counted against the learner).
"""

from __future__ import annotations

import math
from typing import Any

from sandbox import errors
from sandbox.jobs import Failure

from .constants import ErrorCode, Outcome

OUTCOME_SUMMARY = {
    Outcome.PASSED: "All tests passed.",
    Outcome.FAILED: "Some tests failed.",
    Outcome.ERROR: "Your code raised an error before the tests could judge it.",
    Outcome.TIMEOUT: "Your code ran past the time limit.",
    Outcome.MEMORY_LIMIT: "Your code used more memory than the limit allows.",
    Outcome.OUTPUT_LIMIT: "Your code printed more output than the limit allows.",
    Outcome.INFRA_ERROR: "The grader failed on our side. This attempt does not count; please try again.",
    Outcome.CANCELLED: "You cancelled this job. It does not count as an attempt.",
}

# Ours, keyed by the stable error code (``sandbox.errors`` and ``ErrorCode``).
# Each says what happened; a job put back in the queue adds ``RETRYING``, and
# one that ended shows the outcome's own text after it (OUTCOME_SUMMARY).
INFRA_ERRORS: dict[str, str] = {
    errors.DOCKER_UNAVAILABLE: "The grader is unavailable.",
    errors.DOCKER_FAILED: "The grader failed while running your code.",
    errors.IMAGE_MISSING: "The grader is not set up (sandbox image missing).",
    errors.REPORT_MISSING: "The grader produced no report.",
    errors.START_TIMEOUT: "The grader took too long to start.",
    errors.REPORT_INVALID: "The grader's report was unreadable.",
    errors.REPORT_INFRA: "The exercise's tests could not run; the instructors have been told.",
    errors.HARNESS_CRASHED: "The grader failed on its side while grading this; the team has been told. Please try again later.",
    errors.REPORT_CONTRADICTED: "The grader's report did not agree with the tests it ran; the team has been told. Please try again later.",
    errors.CONTAINER_TAINTED: "The grader's sandbox was not clean when your code ran, so its result does not count.",
    ErrorCode.ATTEMPTS_EXHAUSTED: "The grader failed several times in a row. This attempt does not count; please try again later.",
    ErrorCode.RECORD_FAILED: "The grader could not store this result. This attempt does not count; please try again.",
}
RETRYING = "Retrying."


def infra_error(code: str, *, retrying: bool = False) -> str:
    """The learner's sentence for an infrastructure failure (a generic one for an
    unknown code); ``retrying`` when the job went back to the queue for another try."""
    sentence = INFRA_ERRORS.get(code, OUTCOME_SUMMARY[Outcome.INFRA_ERROR])
    return f"{sentence} {RETRYING}" if retrying else sentence


HIDDEN_TEST_FALLBACK = "A hidden edge case failed."
# A Submit that errored once a hidden test had called the learner's code:
# a fixed text, since the error's own text could carry the hidden input.
SUBMIT_ERROR_AFTER_HIDDEN_CALL = (
    "Your code raised an error or ended its process while a hidden test called it. "
    "The details stay hidden; Run the visible tests, and check edge cases the instructions describe."
)
# A Submit whose second run (each hidden test again, in a fresh process)
# failed: the outcome is the re-run's, and the learner is told why.
RERUN_FAILED = {
    "timeout": (
        "Your code passed its first run, but the second check, which runs each hidden test again in a fresh "
        "process, did not finish within the time limit. Code that is slow or hangs when a test runs on its own "
        "cannot pass."
    ),
    "error": (
        "Your code passed its first run, but it raised an error or ended its process when the hidden tests ran "
        "again, each in a fresh process. Make each call depend only on its arguments."
    ),
    "incomplete": "Your code passed its first run, but the second check, which runs each hidden test again in a fresh process, did not complete.",
}
# A `gpu: preferred` rung graded where no GPU was visible (no GPU worker on this platform).
CPU_FALLBACK_NOTE = "Ran on CPU; the GPU-only checks were skipped."

# A `gpu: required` rung on a platform without GPU workers (the workspace page).
GPU_REQUIRED_WAITS = (
    "This rung needs a GPU and no GPU worker is running here: a Run or Submit waits in the queue until one starts."
)

# A `gpu: preferred` rung on a platform without GPU workers (the workspace page).
GPU_PREFERRED_ON_CPU = "This platform has no GPU worker: your code runs on the CPU, and the GPU-only checks are skipped."

STATE_LEAK_NOTE = (
    "Some hidden tests gave a different result when run alone than after other tests: your code keeps "
    "state between calls. Make each call depend only on its arguments."
)
# One such test, by which way it went (sandbox.jobs.JobResult.passes_alone).
LEAK_PASSES_ALONE = (
    "This test passed when it ran on its own but failed after other tests had run: your code keeps "
    "state between calls (a global, a mutable default argument, a class attribute). Make each call "
    "depend only on its arguments."
)
LEAK_FAILS_ALONE = (
    "This test passed only after other tests had run and failed on its own: your code relies on state "
    "left by earlier calls (a global, a mutable default argument, a class attribute, a file). Make each "
    "call depend only on its arguments."
)

CODE_TOO_LARGE = "Your code is {size:,} bytes; the limit is {limit:,} bytes. Remove some of it (large data belongs in the tests, not the solution)."
CODE_NOT_TEXT = "Your code must be UTF-8 text without NUL bytes."
CODE_EMPTY = "The editor is empty, so there is nothing to run. Write your solution, or reset to the starter code."
VERSION_CHANGED = "This exercise was updated since you opened it. Reload the page to get the new version (your draft is kept)."
STALE_PAGE = "This page is out of date. Reload it (your draft is kept) and try again."

IN_FLIGHT = "Your previous code for this exercise is still being graded; wait for its result, then try again."
THROTTLED = "You are sending code too often (at most {limit} a minute). Try again in {seconds} s."
BUSY = "The grader is busy. Try again in {seconds} s."
TOO_MANY_IN_FLIGHT = (
    "Jobs of yours waiting or running: {count}, the most allowed at once: {limit}. "
    "Wait for one to finish; try again in {seconds} s."
)
NOTHING_TO_CANCEL = "This job has already finished; there is nothing to cancel."
UNKNOWN_KIND = "Unknown kind of submission."
NOT_PUBLISHED = "This exercise is not published yet."

# A job a limit stopped, by outcome and where it stopped (sandbox.jobs.JobResult.stopped);
# ``limit`` is the limit it hit (seconds, or bytes of output).
LIMIT_HIT = {
    ("timeout", ""): "Your code did not finish within the {limit:g} s time limit.",
    ("timeout", "loading"): (
        "Your code did not finish loading within the {limit:g} s time limit: something at the top level of your file "
        "(outside any function) runs too long or forever, so no test could run."
    ),
    ("timeout", "processes"): "Processes your code started did not end within the {limit:g} s time limit after they were killed.",
    ("output_limit", ""): "Your code printed more than {limit:,.0f} bytes; output is capped.",
    ("memory_limit", ""): "Your code ran out of memory and was killed.",
    ("memory_limit", "results"): "Your code's results took more memory than the grader allows.",
}


def limit_hit(outcome: str, stopped: str, limit: float) -> str:
    """The sentence for a job a limit stopped (the outcome's own when the limit is unknown)."""
    sentence = LIMIT_HIT.get((outcome, stopped)) or LIMIT_HIT.get((outcome, ""))
    if sentence is None or ("{limit" in sentence and limit <= 0):
        return OUTCOME_SUMMARY[Outcome(outcome)] if outcome in Outcome.values else ""
    return sentence.format(limit=limit)


# A test the time limit stopped: while the module was loading, or in it.
TEST_TIMED_OUT = "The time limit ran out during this test."
TEST_TIMED_OUT_LOADING = "The time limit ran out while your code was loading, before this test could call it."

# A job that stopped early (time, memory or output limit): where it stopped,
# and each test it never reached.
STUCK_IN_TEST = "It was stuck in {name}; the tests after it did not run."
STUCK_UNKNOWN = "No test reported a result before the limit, so the code was stuck while loading or in the first test."
NOT_RUN = "Not run: the job stopped before this test."
# A job the memory limit stopped: the test that was running then (named,
# for a Submit too: its name shows on its row), and on its row.
MEMORY_IN_TEST = "The memory limit was hit while {name} ran; the tests after it did not run."
TEST_HIT_MEMORY = "The memory limit was hit during this test."


def coarse_seconds(seconds: float) -> str:
    """A Submit's timing, rounded to whole seconds before it is stored, in the
    words it deserves ("under 1 s", "about 2 s"), never "1.00 s"."""
    whole = round(seconds)
    return "under 1 s" if whole < 1 else f"about {whole} s"


# ---- Why the learner's code failed a test or a job (sandbox.jobs.Failure: a code and facts) ----
# The harness reports the code, the exit status or signal, the learner's own
# traceback (data, shown as it is) and a short technical detail; these are
# the words. A code this version does not know reads as "unknown".
FAILURE_SENTENCES: dict[str | tuple[str, str], str] = {
    "load_error": "Your code failed to load:",
    "raised": "Raised in your code:",
    "learner_died": "Your code's process stopped answering.",
    ("learner_died", "status"): "Your code ended its process (exit status {status}), e.g. with sys.exit() or os._exit().",
    ("learner_died", "signal"): "Your code's process was killed by signal {signal}.",
    "server_died": "Your code ended the process that runs it, e.g. by killing its parent process.",
    ("server_died", "status"): "Your code ended the process that runs it (exit status {status}), e.g. by killing its parent process.",
    ("server_died", "signal"): "Your code ended the process that runs it (killed by signal {signal}), e.g. by killing its parent process.",
    "channel_broken": "Your code wrote on the grader's channel, a file descriptor it inherited.",
    "value_too_large": "Your code returned a value too large to grade.",
    "invalid_return": "Your code returned a value that cannot be graded.",
    "unknown": "Your code failed in a way the grader could not name.",
}


def failure_text(failure: Failure | None, message: str = "") -> str:
    """What a learner reads for a failed test or job: ``message`` (the test's
    own, e.g. the assertion or the exception) and the worded ``failure``."""
    if failure is None:
        return message
    if failure.code == "load_error":
        return f"{FAILURE_SENTENCES['load_error']}\n{failure.traceback}".strip()
    if failure.code == "raised":
        return f"{message}\n\n{FAILURE_SENTENCES['raised']}\n{failure.traceback}".strip()
    fact = "signal" if failure.signal is not None else "status" if failure.status is not None else ""
    sentence = FAILURE_SENTENCES.get((failure.code, fact)) or FAILURE_SENTENCES.get(failure.code) or FAILURE_SENTENCES["unknown"]
    text = sentence.format(status=failure.status, signal=failure.signal)
    if failure.detail:
        text = f"{text[:-1]} ({failure.detail})."
    parts = [message, text] + ([f"{FAILURE_SENTENCES['raised']}\n{failure.traceback}"] if failure.traceback else [])
    return "\n\n".join(part for part in parts if part)


# How much a pass means (exercises.strength), one line on the module page and in the workspace.
TEST_STRENGTH = (
    "Hidden tests: {named} named, {generated:,} generated cases. They catch {wrong_caught} of {wrong} known mistakes "
    "and {mutants} of small changes to the reference (mutants), and pass {alternatives_passing} of {alternatives} "
    "independent correct solutions."
)


def test_strength(figures: dict[str, Any]) -> str:
    """The line for a version's complete strength figures (``exercises.strength.complete``)."""
    # Rounded down: 0.996 is "99%", never a 100% it did not reach.
    mutants = f"{math.floor(float(figures['mutation_score']) * 100)}%"
    counts = ("named", "generated", "wrong", "wrong_caught", "alternatives", "alternatives_passing")
    return TEST_STRENGTH.format(mutants=mutants, **{key: int(figures[key]) for key in counts})


# --- Notifications (core.notifications): the sentence of each kind, worded when shown ----------
# A notification row keeps a kind and its facts (params), never a sentence:
# the wording can change, and a row written before still reads right.
NOTIFICATION_SENTENCES = {
    "feedback": "{author} left feedback on your attempt #{submission} at {rung} ({course}).",
    "report_reply": "An instructor resolved your report on {rung}; their note is with it.",
}
NOTIFICATION_FALLBACK = "Something new for you."


def notification_sentence(kind: str, params: dict[str, Any]) -> str:
    """The sentence a user reads for a notification of ``kind`` with ``params``.

    A kind this version no longer knows, or facts missing from an old row,
    read as the fallback rather than an error on the user's page.
    """
    sentence = NOTIFICATION_SENTENCES.get(kind)
    if sentence is None:
        return NOTIFICATION_FALLBACK
    try:
        return sentence.format(**{key: str(value) for key, value in params.items()})
    except (KeyError, IndexError, ValueError):
        return NOTIFICATION_FALLBACK


# ---- Courses: joining a course, and a learner's deadlines (courses.enrolment, courses.assignments) ----
JOIN_UNKNOWN = "No course has this join code. Check the code, or ask your teacher for the link."
JOIN_EXPIRED = "This join link expired on {expired}. Ask your teacher for a new one."
JOIN_REVOKED = "This join link was withdrawn by the course's staff. Ask your teacher for a new one."
JOIN_ALREADY_MEMBER = "You are already in this course as {role}; joining again changes nothing."
JOIN_DONE = "You joined {course}."
# A Submit after an assignment's close: graded as always, never counted (courses.deadlines.Timing.AFTER_CLOSE).
PRACTICE_AFTER_CLOSE = "Practice — after the close, not counted."
# A learner's deadline for an assignment, by where it stands now.
DEADLINE_STATE = {
    "not_open": "Opens {opens}, due {due}",
    "open": "Due {due}",
    "late": "Past due: late work counts {percent}% until {closes}",
    "closed": "Closed on {closes}: a Submit now is practice, not counted",
}
DEADLINE_EXTENDED = "Your extension applies."
# Where a rung of an assignment stands for a learner: their first pass, timed by the assignment's deadlines.
PASS_STANDING = {
    "unsolved": "Not solved yet",
    "on_time": "Solved on time",
    "late": "Solved late: counts the late factor",
    "after_close": "Solved after the close: practice, not counted",
}
JOIN_TERMS = "You join as a learner. The course's staff see your attempts at its rungs; its deadlines are in the time zone {time_zone}."
NO_COURSES = "You are in no course yet. Join one with the code or link your teacher gave you."
NO_ASSIGNMENTS = "No assignment in this course yet."


# ---- A speed-graded rung's measurement (issue 60; sandbox.jobs.SpeedFacts) ----
# The ratio is the baseline's time over the learner's; {low}..{high} its
# interval. A verdict other than pass fails the Submit, and says which.
SPEED_VERDICTS: dict[str, str] = {
    "pass": "Speed: {ratio:.2f}x the baseline ({low:.2f}x to {high:.2f}x at {confidence:.1%} confidence); the target is {target}. Passed.",
    "fail": (
        "Every test passed, but your code is not fast enough: {ratio:.2f}x the baseline ({low:.2f}x to {high:.2f}x at "
        "{confidence:.1%} confidence), and the target is {target}."
    ),
    "ambiguous": (
        "Every test passed, but the speed measurement could not decide within its time budget whether your code reaches "
        "the target ({target}){measured}. This is not a verdict on your code: Submit again, or make it clearly faster."
    ),
}
SPEED_REFUSED: dict[str, str] = {
    "wrong_output": "Every test passed, but on the speed phase's inputs your code returned a wrong result, so its speed was not measured.",
    "learner_died": "Every test passed, but your code's process ended during the speed measurement, so its speed was not measured.",
    "raised": "Every test passed, but your code raised an error during the speed measurement, so its speed was not measured.",
    "processes": "Every test passed, but processes your code started did not end, so its speed could not be measured.",
}
SPEED_REFUSED_UNKNOWN = "Every test passed, but your code's speed could not be measured."
# The summary line of a Submit that every test passed and only the speed phase
# failed (by verdict): "Some tests failed." would be false. The history's short
# words for the same, beside the attempt's score.
SPEED_SUMMARY: dict[str, str] = {
    "fail": "Every test passed; the speed target was not met.",
    "ambiguous": "Every test passed; the speed measurement was ambiguous, so there is no verdict on speed yet.",
    "refused": "Every test passed; the speed measurement was refused.",
}
SPEED_NOTE: dict[str, str] = {
    "fail": "speed target not met",
    "ambiguous": "speed measurement ambiguous",
    "refused": "speed measurement refused",
}


def _speed_failure(outcome: str, timings: Any) -> str:
    """The verdict of a speed phase that alone failed a Submit ("fail", "ambiguous", "refused"); "" otherwise."""
    speed = timings.get("speed") if isinstance(timings, dict) else None
    verdict = speed.get("verdict") if isinstance(speed, dict) else None
    return verdict if outcome == Outcome.FAILED and verdict in SPEED_SUMMARY else ""


def outcome_summary(outcome: str, timings: Any = None) -> str:
    """A finished job's summary line: the outcome's (OUTCOME_SUMMARY), unless every test
    passed and the speed phase alone failed it (``timings["speed"]``, grader.results)."""
    verdict = _speed_failure(outcome, timings)
    if verdict:
        return SPEED_SUMMARY[verdict]
    return OUTCOME_SUMMARY[Outcome(outcome)] if outcome in Outcome.values else ""


def speed_note(outcome: str, timings: Any = None) -> str:
    """The history's words for a Submit the speed phase alone failed; "" for any other attempt."""
    verdict = _speed_failure(outcome, timings)
    return SPEED_NOTE[verdict] if verdict else ""


def speed_target(min_ratio: float) -> str:
    """The rung's target in words: "at least 3x the baseline's speed", or "within 1.25x of the reference's time"."""
    if min_ratio >= 1:
        return f"at least {min_ratio:g}x the baseline's speed"
    return f"within {1 / min_ratio:.3g}x of the reference's time"


def speed_sentence(facts: Any) -> str:
    """A speed phase's result in words (``facts``: sandbox.jobs.SpeedFacts)."""
    target = speed_target(facts.target)
    if facts.verdict == "refused":
        return SPEED_REFUSED.get(facts.reason, SPEED_REFUSED_UNKNOWN)
    numbers = facts.ratio is not None and facts.ci_low is not None and facts.ci_high is not None
    if facts.verdict == "ambiguous" or not numbers:
        measured = f"; so far {facts.ratio:.2f}x the baseline ({facts.ci_low:.2f}x to {facts.ci_high:.2f}x)" if numbers else ""
        return SPEED_VERDICTS["ambiguous"].format(target=target, measured=measured)
    return SPEED_VERDICTS[facts.verdict].format(
        ratio=facts.ratio, low=facts.ci_low, high=facts.ci_high, confidence=facts.confidence, target=target
    )


# ---- Predict, then measure; the speed boards (issue 60, items 7 and 8; grader.speed_board) ----
PREDICTION_MIN = 0.01
PREDICTION_MAX = 1000.0
PREDICTION_LABEL = "Your prediction: how many times the baseline's speed will your code reach?"
PREDICTION_HELP = {
    "optional": "Optional. A number such as 3 or 0.8, typed before you Submit; the result shows it beside the measurement.",
    "required": "Required before Submit. A number such as 3 or 0.8; the result shows it beside the measurement.",
}
PREDICTION_REQUIRED = "This rung asks you to predict the speed-up before you Submit: type how many times the baseline's speed you expect your code to reach. Your code is still in the editor."
PREDICTION_INVALID = f"A prediction is a number from {PREDICTION_MIN:g} to {PREDICTION_MAX:g} (times the baseline's speed). Your code is still in the editor."


def prediction_sentence(predicted: float, measured: float) -> str:
    """A prediction beside its measurement: "You predicted 3x; it measured 4.52x: 1.51 times faster than you predicted."."""
    factor = measured / predicted
    said = f"You predicted {predicted:g}x; it measured {measured:.2f}x"
    if 1 / 1.1 <= factor <= 1.1:
        return f"{said}: within 10 %, a good estimate."
    if factor > 1:
        return f"{said}: {factor:.2f} times faster than you predicted."
    return f"{said}: {1 / factor:.2f} times slower than you predicted."


BOARD_ANONYMOUS = "Anonymous learner"
BOARD_YOU = "You"
BOARD_EMPTY = "Nobody has passed this rung's speed target on this machine yet."
BOARD_NAME_RULE = "3 to 30 characters: letters a-z and A-Z, digits, spaces and . _ - only, starting with a letter or digit."
BOARD_NAME_TAKEN = "Another learner already shows that name (or has it as their username); choose another."
BOARD_NAME_NEEDED = "Choose the name to show, or leave the box unticked to stay anonymous."
BOARD_NAME_SAVED_SHOWN = "Saved: speed boards show your best ratios as “{name}”."
BOARD_NAME_SAVED_HIDDEN = "Saved: you are anonymous on speed boards."
