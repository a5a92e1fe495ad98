"""The page, the server and the load generators agree on how a waiting page polls.

`make bench` and `make loadtest` stand in for the page (bench/polling.py);
if the page's timing drifted from theirs, their load would no longer be the
page's, and their verdicts would be about some other client.
"""

from __future__ import annotations

import re
from pathlib import Path

from bench import polling
from grader import pacing

TRACKING_JS = Path(__file__).resolve().parents[1] / "frontend" / "editor" / "workspace" / "tracking.js"


def _page_constants() -> dict[str, int]:
    return {name: int(value) for name, value in re.findall(r"^const (\w+_MS) = (\d+);", TRACKING_JS.read_text(), re.MULTILINE)}


def test_the_load_generators_poll_as_the_page_does():
    page = _page_constants()
    assert page["POLL_MS"] == round(polling.POLL_FIRST_S * 1000)
    assert page["MIN_POLL_MS"] == round(polling.POLL_MIN_S * 1000)
    assert page["MAX_POLL_MS"] == round(polling.POLL_MAX_S * 1000)


def test_the_server_hints_within_what_the_page_follows():
    assert (pacing.MIN_POLL_S, pacing.MAX_POLL_S) == (polling.POLL_MIN_S, polling.POLL_MAX_S)


def test_a_hint_is_followed_within_bounds_and_a_missing_one_falls_back():
    assert polling.next_poll_s({"poll_after_ms": 1500}) == 1.5
    assert polling.next_poll_s({"poll_after_ms": 60_000}) == polling.POLL_MAX_S
    assert polling.next_poll_s({"poll_after_ms": 10}) == polling.POLL_MIN_S
    for state in ({}, {"poll_after_ms": None}, {"poll_after_ms": "soon"}, {"poll_after_ms": -5}, {"poll_after_ms": True}):
        assert polling.next_poll_s(state) == polling.POLL_FIRST_S


def test_locust_loads_the_load_tests_learners_with_the_shared_pacing():
    """As `make loadtest` starts it: Locust puts bench/ first on sys.path, where a
    plain ``import bench`` would find bench/bench.py (it once failed just so)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    locust = Path(sys.executable).with_name("locust")
    listed = subprocess.run([str(locust), "-f", str(root / "bench" / "locustfile.py"), "--list"], cwd=root, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert "Learner" in listed.stdout
