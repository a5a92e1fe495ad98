"""A pytest plugin for the bench's contract floor: each test in a forked child.

A Submit's grading contract runs the hidden tests twice: once together, then
each in a fresh process (the re-run that catches state kept between calls).
The plain floor runs them once, so part of the distance from the floor to
the sandbox is the contract itself, not isolation. This plugin lets the
bench measure that part with no sandbox: each test runs in a child forked
from the warm interpreter (torch imported, the heap frozen), as the harness
forks a fresh learner process from a warm server, and the parent only
records what the child reports. Learner code is not involved: this is a
baseline on the reference solution, never a grader.
"""

from __future__ import annotations

import os

import pytest
from _pytest.runner import runtestprotocol


class ForkEachTest:
    """Runs every test in its own forked child; ``outcomes`` maps test names to results."""

    def __init__(self) -> None:
        self.outcomes: dict[str, str] = {}

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: run the test, say how it went, leave without cleanup
            os.close(read_end)
            outcome = b"e"
            try:
                reports = runtestprotocol(item, nextitem=None, log=False)
                outcome = b"p" if all(report.passed or report.skipped for report in reports) else b"f"
            finally:
                os.write(write_end, outcome)
                os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            said = pipe.read(1)
        _, status = os.waitpid(pid, 0)
        clean = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        self.outcomes[item.name] = {b"p": "passed", b"f": "failed"}.get(said, "error") if clean else "error"
        return True  # the parent never runs the test itself

    def all_passed(self) -> bool:
        return bool(self.outcomes) and all(outcome == "passed" for outcome in self.outcomes.values())


__all__ = ["ForkEachTest"]
