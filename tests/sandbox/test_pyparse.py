"""The platform's parses of Python source take turns, and survive another thread's (sandbox/pyparse.py)."""

from __future__ import annotations

import ast
import threading
from typing import Any

import pytest

from sandbox import pyparse


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


def test_a_parse_broken_by_another_threads_counter_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # What CPython 3.11 raises when a thread outside the lock (a traceback
    # placing its carets, say) parses during ours: the tree is fine on a retry.
    real_parse = ast.parse
    failures = iter([SystemError("AST constructor recursion depth mismatch (before=171, after=34)")] * 2)

    def flaky_parse(source: str, *args: Any, **kwargs: Any) -> ast.Module:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        tree = real_parse(source, *args, **kwargs)
        assert isinstance(tree, ast.Module)
        return tree

    monkeypatch.setattr(ast, "parse", flaky_parse)
    assert [node.name for node in pyparse.parse_python("def test_x():\n    pass\n").body] == ["test_x"]  # type: ignore[attr-defined]


def test_other_system_errors_and_a_mismatch_that_persists_are_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    def other(source: str, *args: Any, **kwargs: Any) -> ast.Module:
        raise SystemError("something else")

    monkeypatch.setattr(ast, "parse", other)
    with pytest.raises(SystemError, match="something else"):
        pyparse.parse_python("x = 1\n")

    calls: list[str] = []

    def always(source: str, *args: Any, **kwargs: Any) -> ast.Module:
        calls.append(source)
        raise SystemError("AST constructor recursion depth mismatch (before=1, after=2)")

    monkeypatch.setattr(ast, "parse", always)
    with pytest.raises(SystemError, match="mismatch"):
        pyparse.parse_python("x = 1\n")
    assert len(calls) == pyparse.ATTEMPTS
