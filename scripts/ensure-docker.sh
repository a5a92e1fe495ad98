#!/usr/bin/env bash
# Make sure a Docker engine answers on this machine, installing and starting
# one when needed. Idempotent: a running engine is left alone.
#
# Why a script and not systemd: CI machines and dev boxes here have no init
# system, only the Docker client; the engine comes from Debian's docker.io
# package and has to be started by hand in the background.
set -euo pipefail

log() { printf '[ensure-docker] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# dockerd lives in /usr/sbin, which a non-root PATH often lacks.
PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
WAIT_SECONDS="${ENSURE_DOCKER_WAIT:-60}"
DOCKERD_LOG="${DOCKERD_LOG:-/tmp/dockerd.log}"

docker_answers() {
    command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1
}

if docker_answers; then
    log "docker engine already running ($(docker info --format '{{.ServerVersion}}' 2>/dev/null || echo '?'))"
    exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        die "dockerd is not installed and this script is not running as root; install it with 'sudo apt-get update && sudo apt-get install -y docker.io' (or rerun this script as root)"
    fi
    log "dockerd not found: installing docker.io from apt"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q || die "apt-get update failed"
    apt-get install -y -q docker.io || die "apt-get install docker.io failed"
    command -v dockerd >/dev/null 2>&1 || die "docker.io installed but dockerd is still not on PATH"
fi

if ! command -v docker >/dev/null 2>&1; then
    die "the docker client is missing although dockerd is present; install docker.io (or docker-ce-cli)"
fi

if command -v pgrep >/dev/null 2>&1 && pgrep -x dockerd >/dev/null 2>&1; then
    # A dockerd that is still starting (or one started by someone else) must
    # not get a twin: two daemons on one data root corrupt each other.
    log "dockerd process already present; waiting for it to answer"
else
    if [ "$(id -u)" -ne 0 ]; then
        die "dockerd is installed but not running, and starting it needs root; rerun as root or start it with 'sudo setsid dockerd >$DOCKERD_LOG 2>&1 &'"
    fi
    log "starting dockerd (log: $DOCKERD_LOG)"
    # setsid: detach from this shell's session so the daemon outlives it.
    setsid dockerd >"$DOCKERD_LOG" 2>&1 < /dev/null &
fi

start=$(date +%s)
while :; do
    if docker info >/dev/null 2>&1; then
        log "docker engine up after $(( $(date +%s) - start ))s ($(docker info --format '{{.ServerVersion}}' 2>/dev/null || echo '?'))"
        exit 0
    fi
    if [ $(( $(date +%s) - start )) -ge "$WAIT_SECONDS" ]; then
        log "last lines of $DOCKERD_LOG:"
        tail -n 20 "$DOCKERD_LOG" >&2 2>/dev/null || true
        last_error="$(docker version --format '{{.Server.Version}}' 2>&1 | grep -v '^WARNING' | grep . | tail -n 1 || true)"
        die "docker engine did not answer 'docker info' within ${WAIT_SECONDS}s (${last_error:-no error text}); see $DOCKERD_LOG"
    fi
    sleep 1
done
