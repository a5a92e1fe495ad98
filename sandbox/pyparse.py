"""Parsing Python source into a syntax tree, safe beside other threads' parses.

CPython 3.11 keeps the AST constructor's recursion counter in state shared
by every thread of the interpreter (CPython issue gh-106905): while one
thread's ``ast.parse`` builds its tree, another thread's parse can reset the
counter, and the first then fails with "SystemError: AST constructor
recursion depth mismatch". The platform's own parses (the loader, the
reference view, planning a job's tests) take turns through one lock, but the
other thread may be one we do not control: Python 3.11's ``traceback`` parses
source lines to place its carets whenever an exception is formatted (a log
line in another request or worker thread). The clean-clone suite met exactly
that: a catalog load failed with the error while another thread logged.
The tree itself is deterministic, so a parse that fails only with that
error is tried again.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()
_MISMATCH = "AST constructor recursion depth mismatch"
ATTEMPTS = 5


def parse_python(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``: never beside another thread's parse through here,
    and tried again when another thread's parse broke the interpreter's shared counter."""
    for attempt in range(ATTEMPTS):
        with _LOCK:
            try:
                return ast.parse(source, filename=filename)
            except SystemError as error:
                if _MISMATCH not in str(error) or attempt == ATTEMPTS - 1:
                    raise
    raise AssertionError("unreachable")  # pragma: no cover
