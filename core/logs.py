"""Structured logs: every line carries the ids of what it is about.

A request binds its request id (the ``X-Request-ID`` it came with when that
is a plain token, else a new one, sent back in the response) and, once
authenticated, its user id; a Run or Submit binds its submission id. The
web sends the request and user ids with the grading task (a Celery message
header), and the worker binds them with the submission id while it grades,
so one submission is followed from the web request to the sandbox run:
``grep '"submission_id": "42"'`` in both logs.

The ids live in a context variable (one per thread or task) and are copied
onto every log record by a record factory, whatever handler formats it; the
``json`` formatter (``LOG_FORMAT``, docs/operations.md) writes them as fields.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.http import HttpRequest, HttpResponseBase
from pythonjsonlogger.json import JsonFormatter

IDS = ("request_id", "user_id", "submission_id")
# Sent with a grading task, so the worker's lines carry the web request's ids.
TASK_HEADER = "dojo_log_ids"
REQUEST_ID_HEADER = "X-Request-ID"
_PLAIN_TOKEN = re.compile(r"[A-Za-z0-9._-]{8,64}")

_bound: ContextVar[dict[str, str] | None] = ContextVar("dojo_log_ids", default=None)


def bound_ids() -> dict[str, str]:
    """The ids bound in this context (a copy)."""
    return dict(_bound.get() or {})


def bind_ids(**ids: object) -> None:
    """Add ``ids`` (request_id, user_id, submission_id) to those of the request or task being served.

    Outside one (a shell, a test calling a service) nothing is bound: ids
    bound there would stay on every later line of the thread.
    """
    current = _bound.get()
    if current is not None:
        current.update({name: str(value) for name, value in ids.items() if name in IDS and value not in (None, "")})


@contextmanager
def ids_bound(**ids: object) -> Iterator[None]:
    """Bind ``ids`` inside the block only (a task's run, a request)."""
    token = _bound.set({})
    try:
        bind_ids(**ids)
        yield
    finally:
        _bound.reset(token)


def replace_ids(ids: dict[str, str] | None) -> None:
    """Replace this context's ids (a task starting with the ids it was sent with; None as it ends)."""
    _bound.set({name: str(value) for name, value in ids.items() if name in IDS} if ids else None)


def _install_record_factory() -> None:
    previous = logging.getLogRecordFactory()
    if getattr(previous, "dojo_ids", False):
        return

    def record_with_ids(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        for name, value in (_bound.get() or {}).items():
            setattr(record, name, value)
        return record

    record_with_ids.dojo_ids = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(record_with_ids)


_install_record_factory()


class JsonLines(JsonFormatter):
    """One JSON object a line: time, level, logger, message, the bound ids, and any ``extra``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("rename_fields", {"asctime": "time", "levelname": "level", "name": "logger"})
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s", *args, **kwargs)


def request_id_from(request: HttpRequest) -> str:
    given = request.headers.get(REQUEST_ID_HEADER, "")
    return given if _PLAIN_TOKEN.fullmatch(given) else secrets.token_hex(8)


class BindRequestIds:
    """Outermost middleware: binds the request id for every line the request logs, and returns it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        request_id = request_id_from(request)
        with ids_bound(request_id=request_id):
            response = self.get_response(request)
        response[REQUEST_ID_HEADER] = request_id
        return response


class BindUserId:
    """After AuthenticationMiddleware: binds the signed-in user's id."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            bind_ids(user_id=user.pk)
        return self.get_response(request)
