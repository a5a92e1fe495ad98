#!/usr/bin/env bash
# The whole test suite: lint, types, then pytest against real Redis, Docker,
# a Celery worker process and (where marked) a real browser, twice:
#   1. every test on PostgreSQL (what production runs), a project-owned
#      cluster started by scripts/postgres.sh;
#   2. a short pass on SQLite, the embedded default of `make run`: the tests
#      marked `sqlite_pass` (migrations, the e2e journey, drafts and submits).
# Arguments go to pytest. TEST_DATABASE=postgres or sqlite runs one pass only,
# with the arguments (e.g. `TEST_DATABASE=sqlite scripts/test.sh grader/tests`);
# by default, arguments select what the PostgreSQL pass runs and the SQLite
# pass runs only when there are none.
set -euo pipefail
cd "$(dirname "$0")/.."
BOOTSTRAP_EXTRA_PACKAGES="chromium" scripts/bootstrap.sh
mkdir -p var
export SECRET_KEY="${SECRET_KEY:-test-only-secret-key}"
TEST_DATABASE="${TEST_DATABASE:-both}"
case "$TEST_DATABASE" in
    both|postgres|sqlite) ;;
    *) echo "[test] TEST_DATABASE must be both, postgres or sqlite, not '$TEST_DATABASE'" >&2; exit 2 ;;
esac
echo "[test] ruff" && .venv/bin/ruff check .
echo "[test] mypy" && .venv/bin/mypy .

run_pytest() {
    # run_pytest LABEL DATABASE_URL PYTEST_ARGS... : one pass, timed; its exit status.
    local label="$1" url="$2" started=$SECONDS rc=0
    shift 2
    echo "[test] pytest on $label"
    # --durations: the slowest tests of every pass are in CI's log, so the
    # suite's time (kept under 30 minutes on a 2-core box) can be followed.
    DATABASE_URL="$url" .venv/bin/pytest --durations=25 "$@" || rc=$?
    echo "[test] pytest on $label: exit $rc in $((SECONDS - started)) s"
    if [ "$rc" -eq 5 ]; then
        echo "[test] pytest collected no tests on $label: treating that as a failure" >&2
        rc=1
    fi
    return "$rc"
}

sqlite_url="sqlite:///$PWD/var/db.sqlite3"  # the test database is a per-process copy beside it
rc=0
if [ "$TEST_DATABASE" != sqlite ]; then
    scripts/postgres.sh start
    run_pytest PostgreSQL "$(scripts/postgres.sh url)" "$@" || rc=$?
fi
if [ "$TEST_DATABASE" = sqlite ]; then
    run_pytest SQLite "$sqlite_url" "$@" || rc=$?
elif [ "$TEST_DATABASE" = both ] && [ $# -eq 0 ]; then
    run_pytest "SQLite (the sqlite_pass tests)" "$sqlite_url" -m sqlite_pass || rc=$?
fi
exit "$rc"
