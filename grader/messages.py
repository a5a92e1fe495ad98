"""Every sentence a learner reads about a grade, in one place.

Two families with stable ids: the learner's (shown as they are) and ours
(infrastructure: retried, alerted, never counted against the learner).
"""

from __future__ import annotations

from .constants import Outcome

OUTCOME_SUMMARY = {
    Outcome.PASSED: "All tests passed.",
    Outcome.FAILED: "Some tests failed.",
    Outcome.ERROR: "Your code raised an error before the tests could judge it.",
    Outcome.TIMEOUT: "Your code ran past the time limit.",
    Outcome.MEMORY_LIMIT: "Your code used more memory than the limit allows.",
    Outcome.OUTPUT_LIMIT: "Your code printed more output than the limit allows.",
    Outcome.INFRA_ERROR: "The grader failed on our side. This attempt does not count; please try again.",
}

INFRA_ERRORS = {
    "docker_unavailable": "The grader is unavailable, retrying.",
    "docker_failed": "The grader failed while running your code, retrying.",
    "image_missing": "The grader is not set up (sandbox image missing).",
    "report_missing": "The grader produced no report, retrying.",
    "start_timeout": "The grader took too long to start, retrying.",
    "report_invalid": "The grader's report was unreadable, retrying.",
    "report_infra": "The exercise's tests could not run; the instructors have been told.",
    "attempts_exhausted": "The grader failed several times in a row. This attempt does not count; please try again later.",
}

HIDDEN_TEST_FALLBACK = "A hidden edge case failed."
STATE_LEAK_NOTE = (
    "Some hidden tests gave a different result when run alone than after other tests: your code keeps "
    "state between calls. Make each call depend only on its arguments."
)

CODE_TOO_LARGE = "Your code is {size} bytes; the limit is {limit} bytes."
CODE_NOT_TEXT = "Your code must be UTF-8 text without NUL bytes."

IN_FLIGHT = "Your previous code for this exercise is still being graded; wait for its result, then try again."
THROTTLED = "You are sending code faster than {limit} times a minute. Try again in {seconds} s."
BUSY = "The grader is busy. Try again in {seconds} s."
