"""How many requests went over the request budget, per view, in this process.

``frontend.request_budget.RequestBudget`` counts them, here for the
tests (``slow_request_counts``: this process since its start) and
in ``dojo_slow_requests_total`` for Prometheus (``core.metrics``).
"""

from __future__ import annotations

import threading
from collections import Counter

from core.metrics import SLOW_REQUESTS

_lock = threading.Lock()
_counts: Counter[str] = Counter()


def count_slow_request(view: str) -> None:
    with _lock:
        _counts[view] += 1
    SLOW_REQUESTS.labels(view).inc()


def slow_request_counts() -> dict[str, int]:
    """{view name: requests over the budget} since this process started."""
    with _lock:
        return dict(_counts)


def slow_request_total() -> int:
    with _lock:
        return sum(_counts.values())
