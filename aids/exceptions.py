"""Errors of the learning aids; ``message`` is shown as it is."""

from __future__ import annotations


class AidRefused(Exception):
    """The request cannot be done (a hint out of order, a report already resolved)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
