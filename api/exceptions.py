from __future__ import annotations


class ApiRefused(Exception):
    """An API request refused with a sentence and a stable code: answered as ``{"error", "code"}``."""

    def __init__(self, message: str, code: str, status: int, retry_after_s: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.retry_after_s = retry_after_s
