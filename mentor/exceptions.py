"""The mentor's errors: the model endpoint failed, or a question was refused."""

from __future__ import annotations


class ModelError(Exception):
    """The configured model did not give an answer; ``message`` is for the learner."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(detail or message)
        self.message = message
        self.detail = detail


class QuestionRejected(Exception):
    """The question cannot be asked (rate limit); ``message`` is for the learner."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
