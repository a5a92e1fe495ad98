"""Whether a report's "passed" agrees with the job it grades: the host's own check.

The report is the harness's word, signed with the job's nonce. Forging one
takes a compromised harness (see docs/security.md), but a pass is the one
result that must never be wrong, so the runner does not take that word
alone. A report that says ``passed`` is believed only when:

- every test it lists passed or skipped itself, and at least one passed
  (the harness's own rule, ``dojo_harness.plugin.all_passed``; a GPU-only
  check skips itself where there is no GPU);
- every test function of the job's files (``Job.planned_tests``) is among
  them, a parametrized one as any of its cases (``test_x[...]``).

A genuine pass always agrees: the harness reports every test it ran, and a
Submit's re-run marks a test whose result depended on state as failed. A
report that does not agree is our error, never a pass and never the
learner's fault: ``report_contradicted``, not retried (the same job would
contradict itself again) and logged as an error for the team.
"""

from __future__ import annotations

import logging

from .errors import REPORT_CONTRADICTED, REPORT_INFRA
from .jobs import MAX_TEST_NAME, MAX_TESTS, Job, JobResult

log = logging.getLogger(__name__)

NOT_FAILED = ("passed", "skipped")


def _function_of(name: str) -> str:
    """The test function a reported name belongs to: ``test_x[1-2]`` (a parametrized case) is ``test_x``."""
    return name.partition("[")[0]


def _covers(reported: set[str], planned: str) -> bool:
    if planned in reported:
        return True
    # A name longer than the stored limit arrives cut and marked
    # (``report.clean_test_name``): match what survives the cut.
    if len(planned) >= MAX_TEST_NAME - 10:
        return any(name[: MAX_TEST_NAME - 10] == planned[: MAX_TEST_NAME - 10] for name in reported)
    return False


def missing_tests(result: JobResult, job: Job) -> list[str]:
    """The job's planned test functions that ``result`` does not report."""
    reported = {_function_of(case.name) for case in result.tests}
    return [name for name in job.planned_tests if not _covers(reported, name)]


def bears_out_pass(result: JobResult, job: Job) -> bool:
    """Whether ``result``'s own tests, and the job's planned ones, bear out a pass."""
    outcomes = [case.outcome for case in result.tests]
    if "passed" not in outcomes or any(outcome not in NOT_FAILED for outcome in outcomes):
        return False
    return not missing_tests(result, job)


def vouch(result: JobResult, job: Job) -> JobResult:
    """``result``, unless it says passed and does not bear that out; then our error, never a pass."""
    if result.outcome != "passed" or bears_out_pass(result, job):
        return result
    if len(result.tests) >= MAX_TESTS and missing_tests(result, job):
        # The report keeps MAX_TESTS cases (``report.parse_report``): tests
        # past the cut cannot be seen, so no pass can be vouched for. The
        # exercise's tests must run fewer cases.
        log.error("a %s report listed %d or more test cases; the rest were cut, so its pass cannot be checked", job.mode, MAX_TESTS)
        return _ours(result, REPORT_INFRA, f"The exercise's tests ran more than {MAX_TESTS} cases, more than the grader keeps.")
    log.error(
        "a %s report said passed but its tests do not bear it out (%d reported, %s not passed, %d planned missing)",
        job.mode, len(result.tests), sum(case.outcome not in NOT_FAILED for case in result.tests), len(missing_tests(result, job)),
    )
    return _ours(result, REPORT_CONTRADICTED, "The grader's report contradicted the tests it ran.")


def _ours(result: JobResult, error_code: str, message: str) -> JobResult:
    return JobResult(outcome="infra_error", error_code=error_code, message=message, timings=dict(result.timings), machine=dict(result.machine))
