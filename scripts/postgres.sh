#!/usr/bin/env bash
# A project-owned PostgreSQL cluster for the tests and the load test:
# Debian's `postgresql` binaries, data and log under var/postgres/ (or
# DOJO_PG_DIR), listening on
# 127.0.0.1 only, on a port of its own. Idempotent: `start` on a running
# cluster does nothing.
#
#   scripts/postgres.sh start   # initdb on first use, then start; prints nothing
#   scripts/postgres.sh url     # postgres://dojo@127.0.0.1:PORT/dojo
#   scripts/postgres.sh url NAME  # the same cluster, database NAME
#   scripts/postgres.sh stop
#
# The port is DOJO_PG_PORT, or one derived from this checkout's path, so that
# several checkouts on one machine each run their own cluster side by side.
# PostgreSQL refuses to run as root: as root, the cluster runs as the
# `postgres` user that Debian's package creates.
#
# NOTE: the cluster trusts every connection from 127.0.0.1 (no password). It
# holds throw-away test data only; never point a production DATABASE_URL here.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[postgres] %s\n' "$*" >&2; }

PG_BIN="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)}"
CHECKOUT_HASH="$(printf %s "$PWD" | cksum | cut -d' ' -f1)"
PG_DIR="${DOJO_PG_DIR:-$PWD/var/postgres}"
if [ -z "${DOJO_PG_DIR:-}" ] && [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$PWD"; then
    # A checkout the postgres user cannot enter (e.g. under /root, mode 700):
    # keep the cluster where it can, still one per checkout.
    PG_DIR="/var/lib/postgresql/dojo-$CHECKOUT_HASH"
fi
PG_DATA="$PG_DIR/data"
PG_LOG="$PG_DIR/postgres.log"
PG_PORT="${DOJO_PG_PORT:-$((16000 + CHECKOUT_HASH % 1000))}"
PG_USER=dojo
PG_DB=dojo

as_owner() {
    # Run a PostgreSQL binary as the cluster's owner (never root).
    if [ "$(id -u)" -eq 0 ]; then
        (cd / && runuser -u postgres -- "$@")  # from /: the checkout may be closed to it
    else
        "$@"
    fi
}

ready() { "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -d "$PG_DB" -U "$PG_USER"; }

start() {
    if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
        log "ERROR: PostgreSQL is not installed (apt-get install -y postgresql, or make test installs it)"
        exit 1
    fi
    mkdir -p "$PG_DIR/run"
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres: "$PG_DIR" "$PG_DIR/run"
    fi
    if [ ! -f "$PG_DATA/PG_VERSION" ]; then
        log "creating the cluster in $PG_DATA"
        as_owner "$PG_BIN/initdb" -D "$PG_DATA" -U "$PG_USER" --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
        # Tuned for a throw-away test cluster: durability off (a crash loses
        # only test data) keeps the suite's many create/flush cycles fast.
        cat >>"$PG_DATA/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$PG_DIR/run'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
    fi
    if ready 2>/dev/null; then
        return 0
    fi
    as_owner "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -o "-p $PG_PORT" -w -t 60 start >/dev/null
    if ! as_owner "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U "$PG_USER" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'" | grep -q 1; then
        as_owner "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U "$PG_USER" "$PG_DB"
    fi
}

stop() {
    if [ -f "$PG_DATA/postmaster.pid" ]; then
        as_owner "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null
    fi
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    url) echo "postgres://$PG_USER@127.0.0.1:$PG_PORT/${2:-$PG_DB}" ;;
    *) echo "usage: $0 start|stop|url [DATABASE]" >&2; exit 2 ;;
esac
