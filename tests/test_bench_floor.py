"""The bench's throughput floor runs pytest as the harness does (bench/bench.py).

The floor is what this machine could grade with no isolation at all; a floor
that pays for work the sandbox's own pytest never does (a garbage collection
over torch's objects at the end of every session, third-party plugins)
reads slower than the machine is and flatters ``burst_vs_floor``.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import bench

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sandbox" / "harness"))

from dojo_harness.plugin import SKIPPED_PLUGINS  # type: ignore[import-not-found]


def test_a_floor_job_grades_the_rung_without_a_garbage_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    collections: list[Any] = []
    real_collect = gc.collect

    def counting_collect(*args: Any) -> int:
        collections.append(args)
        return real_collect(*args)

    # Whatever the floor imports of torch and the rung is imported before counting.
    with bench._harness_pytest():
        bench._floor_job("kv-cache-size", "submit")
        monkeypatch.setattr(gc, "collect", counting_collect)
        bench._floor_job("kv-cache-size", "submit")  # SystemExit if a test failed
        bench._floor_job("gqa-kv-cache", "run")
    assert collections == []


def test_the_floor_leaves_out_what_the_harness_leaves_out(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def fake_main(args: list[str], plugins: list[object]) -> int:
        seen.append(list(args))
        assert os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1"
        return 0

    monkeypatch.setattr(pytest, "main", fake_main)
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    with bench._harness_pytest():
        bench._floor_job("kv-cache-size", "run")
    # Third-party plugins are back on afterwards (the bench process goes on).
    assert "PYTEST_DISABLE_PLUGIN_AUTOLOAD" not in os.environ
    (args,) = seen
    left_out = {args[i + 1].removeprefix("no:") for i, arg in enumerate(args) if arg == "-p"}
    assert left_out == set(SKIPPED_PLUGINS)
    assert "unraisableexception" in left_out
