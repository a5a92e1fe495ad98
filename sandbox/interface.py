"""What the platform needs of a sandbox runner, as a Protocol.

``sandbox.runner.SandboxRunner`` satisfies it; so does the one fake every
test uses (``sandbox.testing.FakeRunner``). Code that grades takes a
``Runner``, never the concrete class widened with ``Any``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .jobs import Job, JobResult

# ("container", {"id"}) once the container exists, ("running", {}) once the
# harness holds the job, ("test", {"name", "outcome", "duration_s", "message"})
# after each test.
EventCallback = Callable[[str, dict[str, Any]], None]


class Runner(Protocol):
    def run(self, job: Job, on_event: EventCallback | None = None) -> JobResult:
        """Run one job to its end and return its result; never raise for a job's own failure."""
        ...

    def stop(self, container_id: str) -> None:
        """Kill the container of a job ``run`` is running (the learner cancelled it); ``run`` then
        returns soon. A container already gone is not an error."""
        ...
