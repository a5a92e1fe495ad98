"""Stable ids of the ways the runner can fail a job on our side.

A job that ends as ``infra_error`` carries one of these in
``JobResult.error_code``; ``grader/messages.py`` keys the sentence a learner
reads by the same id, so the two never drift apart. The learner's own
failures (timeout, memory, a syntax error) are outcomes, not error codes.
"""

from __future__ import annotations

from typing import Final

# Docker could not be reached or refused to create the container.
DOCKER_UNAVAILABLE: Final = "docker_unavailable"
# Docker failed while the job ran (the container vanished, the API broke).
DOCKER_FAILED: Final = "docker_failed"
# The sandbox image is not built on this host.
IMAGE_MISSING: Final = "image_missing"
# The harness did not hold the job within the start-up allowance.
START_TIMEOUT: Final = "start_timeout"
# The container ended without a nonce-tagged report.
REPORT_MISSING: Final = "report_missing"
# A report came back but did not parse.
REPORT_INVALID: Final = "report_invalid"
# The harness itself reported infra_error: the exercise's tests could not
# run. Another try would fail the same way, so it is not retried.
REPORT_INFRA: Final = "report_infra"

# The harness failed in its own code while grading (it still reported,
# because it wraps its whole test phase). A bug of ours: not retried, since
# the same job would fail the same way, and alerted.
HARNESS_CRASHED: Final = "harness_crashed"

# A nonce-tagged report said passed, but its own tests, or the tests the job
# planned, do not bear that out (``sandbox.vouch``): a harness bug or a
# compromise, never a pass. Not retried: the same job would say the same.
REPORT_CONTRADICTED: Final = "report_contradicted"

# The harness found a process of another job alive in the container (its
# check after the last job should have made that impossible): what the job
# measured, an OOM kill above all, may be the other job's doing. Ours: the
# container goes, and another try runs in a clean one.
CONTAINER_TAINTED: Final = "container_tainted"

RUNNER_ERRORS: Final = frozenset(
    {
        DOCKER_UNAVAILABLE, DOCKER_FAILED, IMAGE_MISSING, START_TIMEOUT, REPORT_MISSING, REPORT_INVALID, REPORT_INFRA,
        HARNESS_CRASHED, REPORT_CONTRADICTED, CONTAINER_TAINTED,
    }
)  # fmt: skip
# Worth another try on another worker (or after Docker is back).
RETRYABLE: Final = RUNNER_ERRORS - {REPORT_INFRA, HARNESS_CRASHED, REPORT_CONTRADICTED}
