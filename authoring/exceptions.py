from __future__ import annotations


class AuthoringError(Exception):
    """An author's request that cannot be done as asked; the message says why."""


class PublishRefused(AuthoringError):
    """Publishing needs a passing Check of exactly the draft's current content."""


class ImportRefused(AuthoringError):
    """An uploaded catalog zip is malformed or touches what the user may not change."""
