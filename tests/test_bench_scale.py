"""`make bench-scale` runs (bench/scale.py): a thousandth of a year's deployment, measured through gunicorn, written as JSON.

PostgreSQL only (the bench fills with PostgreSQL's generate_series and reads its plans); CI never runs the real sizes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.db import connection

from bench import scale

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_scale_bench_fills_measures_every_page_and_writes_its_json(tmp_path: Path) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("bench.scale runs on PostgreSQL")
    result = scale.measure_current_database(0.001, requests=1, debug=True)  # DEBUG: no collectstatic (46 s under load)
    output = tmp_path / "scale-results.json"
    scale.report([result], 1, output)

    written = json.loads(output.read_text())
    measured = written["scales"][0]
    assert measured["rows"]["submissions"] == 1000
    assert measured["rows"]["test_rows"] == 20_000
    assert measured["rows"]["rejudge_results"] == 100
    for name in ("module_page", "workspace", "attempt_history", "state_poll", "module_dashboard", "rung_dashboard", "report_queue",
                 "admin_submissions_filtered", "admin_submissions_search", "rejudge_preview", "gradebook", "reaper_sweep"):
        assert measured["pages"][name]["p95_ms"] > 0, name
    assert all(page["status"] == 200 for page in measured["explain"].values()), measured["explain"]
    assert measured["pages"]["gradebook_csv"]["status"] == 200 and measured["pages"]["gradebook_csv"]["bytes"] > 0
    assert measured["pages"]["load_exercises"]["full_ms"] > 0
    assert measured["pages"]["admin_submissions"]["p95_ms"] > 0 and measured["disk_bytes"]["grader_submissiontestresult"] > 0
    assert any(name.endswith("reaper_sweep p95 <= 100 ms") for name in written["targets"])
