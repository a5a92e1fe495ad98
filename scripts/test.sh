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
# Without arguments, the PostgreSQL pass is two pytest processes at once
# (TEST_PROCESSES=1 for one), each with its own Redis and test database:
#   engine: the tests that use the Docker engine, gVisor, Celery workers or a
#           compose stack, or read the whole machine's CPU (ENGINE_MARKS),
#           one after another as before: they share the engine, its pool
#           containers and the host's process table, and some attacks run
#           under time limits of a few seconds;
#   rest:   every other test (web app, database, browser, in-process
#           suites), with DOCKER_HOST at a socket that does not exist: a
#           test that uses the engine without its mark fails here.
# Run as one, the suite kept about one of a 2-core machine's cores busy,
# most of its time spent waiting on containers and workers. (Splitting the
# engine's tests over two processes as well was faster, but an attack then
# overran its time limit.)
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
# The harness runs in the image with its own import roots (sandbox/mypy-harness.ini).
echo "[test] mypy (harness)" && .venv/bin/mypy --config-file sandbox/mypy-harness.ini

run_pytest() {
    # run_pytest LABEL DATABASE_URL PYTEST_ARGS... : one pass, timed; its exit status.
    local label="$1" url="$2" started=$SECONDS rc=0
    shift 2
    echo "[test] pytest on $label"
    # --durations: the slowest tests of every pass are in CI's log, so the
    # suite's time (kept under 30 minutes on a 2-core box) can be followed.
    # The pass's output is also kept, so the summary at the end (the part of
    # a long log that CI shows) can name what failed in every pass.
    local log="$summary_dir/$(echo "$label" | tr -c 'A-Za-z0-9\n' '-').log"
    DATABASE_URL="$url" .venv/bin/pytest --durations=25 -rfE "$@" 2>&1 | tee "$log" || rc=${PIPESTATUS[0]}
    echo "[test] pytest on $label: exit $rc in $((SECONDS - started)) s"
    if [ "$rc" -eq 5 ]; then
        echo "[test] pytest collected no tests on $label: treating that as a failure" >&2
        rc=1
    fi
    echo "$label: exit $rc in $((SECONDS - started)) s" >> "$summary_dir/passes"
    return "$rc"
}

run_tagged() {
    # run_tagged TAG LABEL DATABASE_URL PYTEST_ARGS... : run_pytest, each line
    # of its output starting with [TAG]; its exit status.
    local tag="$1" rc=0
    shift
    run_pytest "$@" > >(sed -u "s/^/[$tag] /") 2>&1 || rc=$?
    return "$rc"
}

summary_dir="$PWD/var/test-summary"
rm -rf "$summary_dir" && mkdir -p "$summary_dir" && : > "$summary_dir/passes"
summarise() {
    # Every pass's exit status and its failed or errored tests, last in the log.
    echo "[test] summary"
    sed 's/^/[test]   /' "$summary_dir/passes"
    grep -h -E '^(FAILED|ERROR) ' "$summary_dir"/*.log 2>/dev/null | sed 's/^/[test]   /' || true
}
trap summarise EXIT

ENGINE_MARKS="docker or worker or gvisor or stack or compose or security or machine"
sqlite_url="sqlite:///$PWD/var/db.sqlite3"  # the test database is a per-process copy beside it
rc=0
if [ "$TEST_DATABASE" != sqlite ]; then
    scripts/postgres.sh start
    pg_url="$(scripts/postgres.sh url)"
    if [ $# -eq 0 ] && [ "${TEST_PROCESSES:-2}" != 1 ]; then
        run_tagged engine "PostgreSQL (engine tests)" "$pg_url" -m "$ENGINE_MARKS" & engine=$!
        DOCKER_HOST="unix://$PWD/var/no-engine-for-unmarked-tests.sock" \
            run_tagged rest "PostgreSQL (the rest, beside them)" "$pg_url" -m "not ($ENGINE_MARKS)" & rest=$!
        wait "$engine" || rc=$?
        wait "$rest" || rc=$?
    else
        run_pytest PostgreSQL "$pg_url" "$@" || rc=$?
    fi
fi
if [ "$TEST_DATABASE" = sqlite ]; then
    run_pytest SQLite "$sqlite_url" "$@" || rc=$?
elif [ "$TEST_DATABASE" = both ] && [ $# -eq 0 ]; then
    run_pytest "SQLite (the sqlite_pass tests)" "$sqlite_url" -m sqlite_pass || rc=$?
fi
exit "$rc"
