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
}

QUEUE_RUN = "run"
QUEUE_SUBMIT = "submit"
QUEUE_GPU = "gpu"
QUEUE_MAINTENANCE = "maintenance"
