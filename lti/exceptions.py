"""Why a launch is refused: one exception carrying a stable code (lti/refusals.py has the words)."""

from __future__ import annotations


class LaunchRefused(Exception):
    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail


class UnknownDeployment(Exception):
    """Raised from the tool configuration inside pylti1p3's validation."""

    def __init__(self, deployment_id: str) -> None:
        super().__init__(f"deployment {deployment_id!r} is not registered")
        self.deployment_id = deployment_id


class ScorePostFailed(Exception):
    """An LMS did not take a score; ``retryable`` says whether another try may help."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable
