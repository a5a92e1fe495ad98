"""The request budget: every request's wall, CPU and database time is measured;
one over 500 ms is logged with its view and counted for the metrics (issue 55)."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory

from frontend import request_budget
from frontend.request_budget import RequestBudget
from frontend.slow_requests import slow_request_counts, slow_request_total

pytestmark = pytest.mark.django_db


def test_a_page_within_the_budget_is_measured_and_not_counted(client: Any, caplog: pytest.LogCaptureFixture,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(request_budget, "SLOW_REQUEST_S", 60.0)  # this loaded machine's first page may take 0.7 s
    before = slow_request_total()
    response = client.get("/")
    assert response.status_code == 200
    times = response.wsgi_request.request_times
    assert 0 < times.cpu_s and times.queries >= 1 and 0 < times.db_s < times.wall_s
    assert slow_request_total() == before
    assert "slow request" not in caplog.text


def test_a_page_over_the_budget_is_logged_with_its_view_and_counted(client: Any, caplog: pytest.LogCaptureFixture,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(request_budget, "SLOW_REQUEST_S", 0.0)
    before = slow_request_counts().get("catalog", 0)
    with caplog.at_level(logging.WARNING, logger="frontend.request_budget"):
        assert client.get("/").status_code == 200
    assert slow_request_counts()["catalog"] == before + 1
    line = next(record.getMessage() for record in caplog.records if "slow request" in record.getMessage())
    assert "GET / view=catalog status=200" in line and "cpu=" in line and "db=" in line and "queries=" in line


def _slow_view(seconds: float, *, queries: int = 0, compute: bool = False) -> Any:
    """A view that waits ``seconds`` of wall time, or computes for ``seconds`` of CPU time."""
    def view(request: HttpRequest) -> HttpResponse:
        for _ in range(queries):
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
        clock = time.thread_time if compute else time.perf_counter
        deadline = clock() + seconds
        while clock() < deadline:
            if not compute:
                time.sleep(0.01)
        return HttpResponse("ok")
    return view


def test_waiting_and_computing_are_told_apart() -> None:
    request = RequestFactory().get("/somewhere")
    RequestBudget(_slow_view(0.6, queries=3))(request)
    waited = request.request_times  # type: ignore[attr-defined]
    assert waited.wall_s >= 0.6 and waited.cpu_s < 0.3 and waited.queries == 3 and waited.db_s > 0

    request = RequestFactory().get("/somewhere")
    RequestBudget(_slow_view(0.6, compute=True))(request)
    computed = request.request_times  # type: ignore[attr-defined]
    assert computed.cpu_s >= 0.6 and computed.wall_s >= computed.cpu_s and computed.queries == 0 and computed.db_s == 0
    assert slow_request_counts()["(no view)"] >= 2
