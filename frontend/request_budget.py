"""The request budget: each request's wall, CPU and database time, and the slow ones named.

A request that takes over ``SLOW_REQUEST_S`` is logged with its view and
the three times, and counted (``frontend.slow_requests``). The database time
is the time spent inside queries (``connection.execute_wrapper``), waiting
for a lock included: a request that waited on another's write shows it
there, one that computed for long shows it as CPU time (issue 55: a mentor
question that backtracked for a minute, inside a write transaction).

Outermost in MIDDLEWARE but for the request id (core.logs), so that every
other middleware's time counts. A streamed response is measured until its
first byte is ready, not its last.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.http import HttpRequest, HttpResponseBase

from core.metrics import REQUEST_SECONDS

from .slow_requests import count_slow_request

log = logging.getLogger(__name__)

SLOW_REQUEST_S = 0.5


@dataclass
class RequestTimes:
    wall_s: float = 0.0
    cpu_s: float = 0.0
    db_s: float = 0.0
    queries: int = 0


class _DatabaseClock:
    def __init__(self, times: RequestTimes) -> None:
        self.times = times

    def __call__(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.times.db_s += time.perf_counter() - started
            self.times.queries += 1


def view_name(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    if match is None:
        return "(no view)"
    return str(match.view_name or match._func_path)


class RequestBudget:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        times = RequestTimes()
        clock = _DatabaseClock(times)
        wall, cpu = time.perf_counter(), time.thread_time()
        with ExitStack() as stack:
            for alias in connections:
                stack.enter_context(connections[alias].execute_wrapper(clock))
            response = self.get_response(request)
        times.wall_s, times.cpu_s = time.perf_counter() - wall, time.thread_time() - cpu
        request.request_times = times  # type: ignore[attr-defined]  # for tests and later middleware
        view = view_name(request)
        REQUEST_SECONDS.labels(view).observe(times.wall_s)
        if times.wall_s > SLOW_REQUEST_S:
            count_slow_request(view)
            log.warning(
                "slow request: %s %s view=%s status=%s wall=%.0fms cpu=%.0fms db=%.0fms queries=%d",
                request.method, request.path, view, response.status_code, times.wall_s * 1000, times.cpu_s * 1000, times.db_s * 1000, times.queries,
            )
        return response
