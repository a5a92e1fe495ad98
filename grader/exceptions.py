from __future__ import annotations


class SubmissionRejected(Exception):
    """Bad input from the learner: shown as a 4xx with this message; nothing stored."""


class RetryLater(Exception):
    """An infrastructure failure worth another try (the submission is queued again)."""

    def __init__(self, message: str, delay_s: int) -> None:
        super().__init__(message)
        self.delay_s = delay_s
