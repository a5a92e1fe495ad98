"""The load test's printed report reads in the order things happened."""

from __future__ import annotations

import json
import re

import pytest

from bench import loadtest
from bench.stack import REPO_ROOT


def test_the_per_minute_table_runs_from_the_first_minute_to_the_last(capsys: pytest.CaptureFixture[str]) -> None:
    # As the report is read back from JSON written with sorted keys: "10" before "2".
    minutes = {str(minute): {"json api": {"p50": 10 + minute, "p95": 90 + minute}} for minute in range(12)}
    by_minute = json.loads(json.dumps(minutes, sort_keys=True))
    assert list(by_minute)[:3] == ["0", "1", "10"]
    report = json.loads((REPO_ROOT / "bench" / "loadtest-results.json").read_text())
    report["latency"]["by_minute"] = by_minute
    loadtest.print_report(report)
    printed = [int(number) for number in re.findall(r"^  minute (\d+) ", capsys.readouterr().out, flags=re.MULTILINE)]
    assert printed == list(range(1, 13))
