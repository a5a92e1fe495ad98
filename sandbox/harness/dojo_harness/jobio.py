"""What a job reads and writes around the learner's code: the folder of its
tests, the learner's captured output (``OutputTap``), the nonce-tagged
report (``Emitter``) and the container's OOM kills.

Shared by the job process (``main``) and the mutants mode (``mutants``),
which ``main`` starts: here, so that neither imports the other.
"""

from __future__ import annotations

import json
import os
import select
import threading
from pathlib import Path
from typing import IO, Any

WORK = Path("/work")
TEST_DIR = WORK / "harness" / "tests"
STORED_OUTPUT = 64 * 1024
# The most ``OutputTap.settle`` reads: what a pipe can hold at its largest
# (an unprivileged process may grow its pipe to 1 MiB), and a chunk more.
SETTLE_MAX_BYTES = 1024 * 1024 + 65536


class OutputTap:
    """Drains one learner pipe: keeps the first bytes, counts all of them.

    A thread reads whatever arrives; ``settle`` reads, under the same lock,
    whatever is still in the pipe. The learner's process flushes its output
    before each answer and before it exits, so once the harness has its last
    answer, ``settle`` has everything printed until then: no fixed wait.
    """

    def __init__(self, fd: int, limit: int, on_flood: threading.Event) -> None:
        self.fd = fd
        self.limit = limit
        self.on_flood = on_flood
        self.kept = bytearray()
        self.total = 0
        self.closed = False
        self.lock = threading.Lock()
        os.set_blocking(fd, False)
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        while not self.closed:
            try:
                select.select([self.fd], [], [])
            except (OSError, ValueError):
                return
            # One chunk per hold of the lock, so ``settle`` is never kept
            # waiting by a writer that does not stop.
            with self.lock:
                self._read_available(65536)

    def _read_available(self, budget: int | None = None) -> None:
        """Read until the pipe is empty (or closed), or ``budget`` bytes. Hold ``lock``."""
        while not self.closed and (budget is None or budget > 0):
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                self.closed = True
                return
            if not chunk:
                self.closed = True
                return
            self.total += len(chunk)
            if budget is not None:
                budget -= len(chunk)
            if len(self.kept) < STORED_OUTPUT:
                self.kept += chunk[: STORED_OUTPUT - len(self.kept)]
            if self.total > self.limit:
                self.on_flood.set()

    def settle(self) -> None:
        """Take in everything already written to the pipe.

        Bounded: a learner process still writing as fast as this reads (a
        run that timed out or flooded, whose processes are not yet killed)
        is a flood, not output to wait for.
        """
        with self.lock:
            if not self.on_flood.is_set():
                self._read_available(SETTLE_MAX_BYTES)

    def text(self) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        if self.total > len(self.kept):
            text += f"\n[... output truncated: {self.total} bytes in all ...]"
        return text


class Emitter:
    """Writes nonce-tagged events on the report stream (the real stdout)."""

    def __init__(self, nonce: str, stream: IO[str]) -> None:
        self.prefix = f"@@DOJO {nonce} "
        self.stream = stream
        self.lock = threading.Lock()

    def emit(self, event: str, **data: Any) -> None:
        line = self.prefix + json.dumps({"event": event, **data}, separators=(",", ":")) + "\n"
        with self.lock:
            self.stream.write(line)
            self.stream.flush()


def cgroup_value(*candidates: str, key: str | None = None) -> int | None:
    """The first of ``candidates`` that can be read: its first number, or the value of its line ``key``."""
    for path in candidates:
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        if key is None:
            try:
                return int(text.split()[0])
            except (ValueError, IndexError):
                continue
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == key:
                return int(parts[1])
    return None


def oom_kills() -> int:
    return cgroup_value("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control", key="oom_kill") or 0
