from __future__ import annotations


class CliError(Exception):
    """A one-line error for the learner; the command exits with ``exit_code``."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code
