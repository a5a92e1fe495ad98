"""Parsing Python source into a syntax tree, one thread at a time.

CPython 3.11 keeps the AST constructor's recursion counter in state shared
by every thread of the interpreter (CPython issue gh-106905): two threads
running ``ast.parse`` at once can make one of them fail with "SystemError:
AST constructor recursion depth mismatch". Web threads parse authors' and
the catalog's test files (the loader, the reference view), so every parse
of the platform goes through this lock.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse_python(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, never beside another thread's parse through here."""
    with _LOCK:
        return ast.parse(source, filename=filename)
