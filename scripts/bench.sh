#!/usr/bin/env bash
# Run latency through the real stack against a naive grader and the warm floor.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/python -m bench.bench "$@"
