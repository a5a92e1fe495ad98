"""How many requests went over the request budget, per view, in this process.

``frontend.request_budget.RequestBudget`` counts them; the metrics export
(the operations issue) reads them with ``slow_request_counts``. Each web
worker process keeps its own count from its start.
"""

from __future__ import annotations

import threading
from collections import Counter

_lock = threading.Lock()
_counts: Counter[str] = Counter()


def count_slow_request(view: str) -> None:
    with _lock:
        _counts[view] += 1


def slow_request_counts() -> dict[str, int]:
    """{view name: requests over the budget} since this process started."""
    with _lock:
        return dict(_counts)


def slow_request_total() -> int:
    with _lock:
        return sum(_counts.values())
