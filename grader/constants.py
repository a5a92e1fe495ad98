"""The submission state machine and its vocabularies."""

from __future__ import annotations

from django.db import models


class Kind(models.TextChoices):
    RUN = "run", "Run (visible tests)"
    SUBMIT = "submit", "Submit (hidden tests)"


class Status(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"


class Outcome(models.TextChoices):
    PASSED = "passed", "Passed"
    FAILED = "failed", "Failed"
    ERROR = "error", "Error"
    TIMEOUT = "timeout", "Time limit"
    MEMORY_LIMIT = "memory_limit", "Memory limit"
    OUTPUT_LIMIT = "output_limit", "Output limit"
    INFRA_ERROR = "infra_error", "Grader error"
    # The learner stopped it: never an attempt, never progress.
    CANCELLED = "cancelled", "Cancelled"


class CaseOutcome(models.TextChoices):
    PASSED = "passed", "Passed"
    FAILED = "failed", "Failed"
    ERROR = "error", "Error"
    SKIPPED = "skipped", "Skipped"
    TIMEOUT = "timeout", "Time limit"


# How good an outcome is, for "best outcome so far" (higher is better).
OUTCOME_RANK = {
    Outcome.PASSED: 6,
    Outcome.FAILED: 5,
    Outcome.ERROR: 4,
    Outcome.TIMEOUT: 3,
    Outcome.MEMORY_LIMIT: 2,
    Outcome.OUTPUT_LIMIT: 1,
    Outcome.INFRA_ERROR: 0,
    Outcome.CANCELLED: 0,
}



class ErrorCode:
    """Stable ids of failures on our side that the grader (not the runner) decides.

    The runner's own ids are in ``sandbox.errors``; ``grader.messages`` keys
    the learner's sentence by either.
    """

    # The job was retried GRADER_MAX_ATTEMPTS times (e.g. its worker kept dying).
    ATTEMPTS_EXHAUSTED = "attempts_exhausted"
    # The result could not be written (e.g. the database refused a string):
    # the job ends with a stored fallback instead of staying running.
    RECORD_FAILED = "record_failed"


QUEUE_RUN = "run"
QUEUE_SUBMIT = "submit"
QUEUE_GPU = "gpu"
QUEUE_MAINTENANCE = "maintenance"
