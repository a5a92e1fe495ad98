"""How a waiting page paces its polls, for the load generators that stand in for it.

The page (frontend/editor/workspace/tracking.js) polls the state URL when the
last state said to (``poll_after_ms``), within these bounds, and before any
state has said so after ``POLL_FIRST_S``. `make bench` and `make loadtest`
follow the same rule, so the load they put on the server is the page's.
This module imports nothing from the platform (Locust loads it).
"""

from __future__ import annotations

from typing import Any

POLL_FIRST_S = 0.7
POLL_MIN_S = 0.7
POLL_MAX_S = 5.0


def next_poll_s(state: dict[str, Any]) -> float:
    """Seconds until the page asks again, from the state's ``poll_after_ms``."""
    hint = state.get("poll_after_ms")
    if not isinstance(hint, int | float) or isinstance(hint, bool) or hint <= 0:
        return POLL_FIRST_S
    return float(min(POLL_MAX_S, max(POLL_MIN_S, hint / 1000)))
