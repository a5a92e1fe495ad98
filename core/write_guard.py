"""No parsing, searching, rendering, sandbox or network call inside a write transaction.

A transaction that writes holds a lock others wait for: on SQLite (opened
with BEGIN IMMEDIATE) the one write lock of the whole database, on
PostgreSQL the rows it locked (``lock_learner``). One mentor question whose
reading backtracked for 55 s inside such a transaction made every other
learner's draft save and login wait, then fail with "database is locked"
(issue 55). So the slow work comes first, and the transaction only counts
and writes.

The slow entry points are decorated with ``outside_write_transaction``.
Called inside a transaction the product opened, they raise under the tests
and in DEBUG, and log an error in production (a page still answers).
Transactions that the test framework opened around a test do not count.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from django.conf import settings
from django.db import connection

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")


class WorkInWriteTransaction(RuntimeError):
    """Slow work was started while a write transaction was open."""


def in_write_transaction() -> bool:
    """Whether the product holds a transaction open on this thread's connection (not a test's own)."""
    return any(not getattr(block, "_from_testcase", False) for block in connection.atomic_blocks)


def _strict() -> bool:
    return bool(settings.DEBUG) or "PYTEST_CURRENT_TEST" in os.environ


def check_outside_write_transaction(what: str) -> None:
    """Refuse (or, in production, report) ``what`` when a write transaction is open."""
    if not in_write_transaction():
        return
    message = f"{what} was called inside a write transaction: do it before the transaction, or after it"
    if _strict():
        raise WorkInWriteTransaction(message)
    log.error(message)


def outside_write_transaction(function: Callable[P, R]) -> Callable[P, R]:
    """Decorate slow work that must never run while a write transaction holds its locks."""
    what = f"{function.__module__}.{function.__qualname__}"

    @functools.wraps(function)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        check_outside_write_transaction(what)
        return function(*args, **kwargs)

    guarded.__dict__["write_guarded"] = True
    return guarded


def is_guarded(function: Any) -> bool:
    return bool(getattr(function, "write_guarded", False))
