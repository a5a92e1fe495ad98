"""The platform's parses of Python source take turns (core/pyparse.py)."""

from __future__ import annotations

import threading

from core import pyparse


def test_a_parse_waits_while_another_thread_parses() -> None:
    done = threading.Event()
    parsed: list[int] = []

    def parse() -> None:
        parsed.append(len(pyparse.parse_python("def test_x():\n    pass\n").body))
        done.set()

    with pyparse._LOCK:  # another thread's parse in progress
        thread = threading.Thread(target=parse)
        thread.start()
        assert not done.wait(0.2)
    assert done.wait(5)
    thread.join()
    assert parsed == [1]
