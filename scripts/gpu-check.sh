#!/usr/bin/env bash
# The device check anyone can run on a CUDA host: no Docker, no platform, only
# a python3 (3.11 or 3.12) with torch (CUDA) and pytest. It grades the GPU
# rung's reference, starter and wrong solutions (scripts/gpu_check.py), checks
# the GPU-only assertions and prints the device facts; then the speed phase on
# the GPU (scripts/gpu_check_speed.py): a known-fast and a known-slow solution
# and a side-stream cheat measured by the harness's speed phase, the verdicts
# and the device printed (it needs numpy too). Under 10 minutes in all (5.5 + 4 at most).
#   scripts/gpu-check.sh                # PYTHON=python3.12 to pick another interpreter
#   scripts/gpu-check.sh --allow-cpu    # a dry run without a GPU (never a GPU verification)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
"$python" -c 'import sys, torch, pytest; assert sys.version_info[:2] >= (3, 11), sys.version' \
    || { echo "gpu-check: $python needs Python >= 3.11 with torch and pytest" >&2; exit 2; }
status=0
timeout 330 "$python" scripts/gpu_check.py "$@" || status=$?
# No GPU (and no --allow-cpu): the check said NOT RUN, and nothing more runs.
[ "$status" -eq 2 ] && exit 2
if ! "$python" -c 'import numpy' 2>/dev/null; then
    echo "SPEED CHECK: NOT RUN (numpy missing for $python)"
    exit 3
fi
speed=0
timeout 240 "$python" scripts/gpu_check_speed.py "$@" || speed=$?
[ "$status" -ne 0 ] && exit "$status"
exit "$speed"
