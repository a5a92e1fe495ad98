"""scripts/gpu-check.sh never calls a host without a GPU verified."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_without_a_gpu_the_device_check_says_it_did_not_run():
    out = subprocess.run(
        ["bash", "scripts/gpu-check.sh"], cwd=ROOT, env={**os.environ, "PYTHON": sys.executable}, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stdout.startswith("machine: device CPU") and "torch 2.13.0" in out.stdout
    assert out.stdout.rstrip().endswith("GPU CHECK: NOT RUN (no GPU)")
