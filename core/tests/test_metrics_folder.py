"""A missing multiprocess folder is made, not a crash at boot: every web and worker
process counts into it from its first metric (the stack test's gunicorn died
with FileNotFoundError on /run/prometheus/counter_<pid>.db)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_missing_multiprocess_folder_is_made_when_the_metrics_load(tmp_path: Path) -> None:
    folder = tmp_path / "not-yet" / "prometheus"
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(folder)}
    code = "import core.metrics as m; m.BUSY_REFUSALS.inc(); print('ok')"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert folder.is_dir() and any(folder.iterdir())
