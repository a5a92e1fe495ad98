#!/usr/bin/env bash
# The whole test suite: lint, types, then pytest against real Redis, Docker,
# a Celery worker process and (where marked) a real browser.
set -euo pipefail
cd "$(dirname "$0")/.."
BOOTSTRAP_EXTRA_PACKAGES="chromium" scripts/bootstrap.sh
mkdir -p var
export SECRET_KEY="${SECRET_KEY:-test-only-secret-key}"
echo "[test] ruff" && .venv/bin/ruff check .
echo "[test] mypy" && .venv/bin/mypy .
echo "[test] pytest"
set +e
.venv/bin/pytest "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
    echo "[test] pytest collected no tests: treating that as a failure" >&2
    exit 1
fi
exit "$rc"
