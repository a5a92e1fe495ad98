#!/usr/bin/env bash
# `make loadtest`: Locust learners against a throw-away stack on this machine
# (web :8100, Redis :6395, data in var/loadtest/), then a report in
# bench/loadtest-results.json (LOADTEST_DATABASE=postgres: on the project's
# PostgreSQL cluster, bench/loadtest-results-postgres.json). LOADTEST_USERS / LOADTEST_DURATION (and the
# other LOADTEST_* variables in bench/loadtest.py) size the run, e.g.
#   LOADTEST_USERS=20 LOADTEST_DURATION=30s make loadtest
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/python -m bench.loadtest "$@"
