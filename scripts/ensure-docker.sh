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

# gVisor (runsc), the stronger sandbox runtime (SANDBOX_RUNTIME=runsc; the
# security suite runs part of itself under it). Registered in daemon.json,
# which a running dockerd re-reads on SIGHUP. Sandbox containers have no
# network, and runsc refuses to start without one unless told so.
ensure_runsc() {
    if ! command -v runsc >/dev/null 2>&1; then
        if [ "$(id -u)" -ne 0 ]; then
            log "WARNING: runsc (gVisor) is not installed and this script is not root: SANDBOX_RUNTIME=runsc will not work"
            return 0
        fi
        log "installing runsc (gVisor) from apt"
        export DEBIAN_FRONTEND=noninteractive
        [ -f /tmp/.dojo-apt-updated ] || { apt-get update -q >/dev/null && touch /tmp/.dojo-apt-updated; }
        apt-get install -y -q runsc >/dev/null || die "apt-get install runsc failed"
    fi
    [ "$(id -u)" -eq 0 ] || return 0
    mkdir -p /etc/docker
    python3 - "$(command -v runsc)" <<'PY'
import json, pathlib, sys
path = pathlib.Path("/etc/docker/daemon.json")
config = json.loads(path.read_text() or "{}") if path.exists() else {}
wanted = {"path": sys.argv[1], "runtimeArgs": ["--network=none"]}
if config.get("runtimes", {}).get("runsc") != wanted:
    config.setdefault("runtimes", {})["runsc"] = wanted
    path.write_text(json.dumps(config, indent=2) + "\n")
    print("changed")
PY
}

runsc_registered() {
    docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'
}

changed="$(ensure_runsc)"

if docker_answers; then
    if [ -n "$changed" ] || ! runsc_registered; then
        log "registering the runsc runtime with the running dockerd (SIGHUP)"
        pkill -HUP -x dockerd 2>/dev/null || true
        for _ in $(seq 1 20); do runsc_registered && break; sleep 0.5; done
    fi
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
