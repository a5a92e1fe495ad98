from __future__ import annotations


class SubmissionRejected(Exception):
    """Bad input from the learner: shown as a 4xx with this message; nothing stored."""

    http_status = 400
    retry_after_s: int | None = None


class CodeRejected(SubmissionRejected):
    """The code breaks the rule for code (``grader.services.validate_code``);
    ``reason`` is ``too_large`` (413) or ``not_text``."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.http_status = 413 if reason == "too_large" else 400


class SubmissionInFlight(SubmissionRejected):
    """The learner already has a job queued or running for this rung."""

    http_status = 409


class NothingToCancel(SubmissionRejected):
    """Cancel was asked of a job that had already ended."""

    http_status = 409


class SubmissionThrottled(SubmissionRejected):
    """The learner is over the per-learner rate limit."""

    http_status = 429

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class TooManyJobsInFlight(SubmissionRejected):
    """The learner has GRADER_MAX_JOBS_IN_FLIGHT jobs queued or running, across all rungs."""

    http_status = 429

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class GraderBusy(SubmissionRejected):
    """The queue is full: refuse now rather than grow without bound."""

    http_status = 503

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class RetryLater(Exception):
    """An infrastructure failure worth another try (the submission is queued again)."""

    def __init__(self, message: str, delay_s: int) -> None:
        super().__init__(message)
        self.delay_s = delay_s
