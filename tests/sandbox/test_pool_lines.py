"""A pooled container's stdout lines (sandbox/pool.py ``Launched.lines``), without Docker."""

from __future__ import annotations

import socket

from sandbox.pool import READY_PREFIX, Launched


def _frame(data: bytes) -> bytes:
    # Docker's attach stream: stream 1 (stdout), three zero bytes, the size.
    return b"\x01\x00\x00\x00" + len(data).to_bytes(4, "big") + data


def _launched() -> tuple[Launched, socket.socket]:
    ours, theirs = socket.socketpair()
    return Launched(container=None, sock=ours, launch_s=0.0, started_at=0.0, max_jobs=2, jobs=1), theirs


def test_the_ready_line_that_came_with_the_report_is_still_there_for_wait_ready() -> None:
    launched, harness = _launched()
    try:
        # The report's last line and the ready line in one read, as a quick harness writes them.
        harness.sendall(_frame(b'{"event": "report"}\n' + READY_PREFIX + b"1\n"))
        for line in launched.lines(4096):
            assert line == b'{"event": "report"}'
            break  # the runner stops reading at the report
        assert launched.wait_ready(2.0)
    finally:
        harness.close()
        launched.sock.close()


def test_lines_split_across_frames_and_an_overlong_partial_line_is_dropped() -> None:
    launched, harness = _launched()
    try:
        harness.sendall(_frame(b"one\ntw") + _frame(b"o\n") + _frame(b"x" * 50) + _frame(b"x" * 50) + _frame(b"\nthree\n"))
        harness.shutdown(socket.SHUT_WR)
        # The 100 x's never ended within 64 bytes: dropped, and their newline ends an empty line.
        assert list(launched.lines(64)) == [b"one", b"two", b"", b"three"]
    finally:
        harness.close()
        launched.sock.close()
