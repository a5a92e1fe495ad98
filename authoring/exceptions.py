from __future__ import annotations


class AuthoringError(Exception):
    """An author's request that cannot be done as asked; the message says why."""


class PublishRefused(AuthoringError):
    """Publishing needs a passing Check of exactly the draft's current content."""


class ImportRefused(AuthoringError):
    """An uploaded catalog zip is malformed or touches what the user may not change."""


class CheckRefused(AuthoringError):
    """A Check is not queued now (one is still running); ``retry_after_s`` says when to try again."""

    def __init__(self, sentence: str, retry_after_s: int) -> None:
        super().__init__(sentence)
        self.retry_after_s = retry_after_s
