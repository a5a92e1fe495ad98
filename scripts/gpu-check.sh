#!/usr/bin/env bash
# The device check anyone can run on a CUDA host: no Docker, no platform, only
# a python3 (3.11 or 3.12) with torch (CUDA) and pytest. It grades the GPU
# rung's reference, starter and wrong solutions (scripts/gpu_check.py), checks
# the GPU-only assertions and prints the device facts. A few minutes at most.
#   scripts/gpu-check.sh                # PYTHON=python3.12 to pick another interpreter
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
"$python" -c 'import sys, torch, pytest; assert sys.version_info[:2] >= (3, 11), sys.version' \
    || { echo "gpu-check: $python needs Python >= 3.11 with torch and pytest" >&2; exit 2; }
exec timeout 420 "$python" scripts/gpu_check.py "$@"
