#!/usr/bin/env bash
# Install what the platform needs on a fresh Debian machine, idempotently:
# the virtualenv with the pinned packages, Redis, the Docker engine (started),
# docker-compose, and the sandbox image. Prints a clear message for anything
# it cannot install (not root, no apt).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[bootstrap] %s\n' "$*" >&2; }

PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3

apt_install() {
    # apt_install PACKAGE... : install the Debian packages that are missing.
    local missing=()
    for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        log "ERROR: missing system packages: ${missing[*]}; install them (apt-get install -y ${missing[*]}) and rerun"
        exit 1
    fi
    log "installing ${missing[*]}"
    if [ ! -f /tmp/.dojo-apt-updated ]; then apt-get update -q >/dev/null && touch /tmp/.dojo-apt-updated; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
}

# 1. System packages. Redis runs on a project-owned port; docker-compose only
#    validates docker-compose.yml; debootstrap builds an image base offline;
#    PostgreSQL runs the test suite (scripts/postgres.sh, a project-owned cluster);
#    prometheus ships promtool, which checks deploy/prometheus/alerts.yml.
apt_install redis-server postgresql docker-compose debootstrap prometheus ${BOOTSTRAP_EXTRA_PACKAGES:-}

# 2. The virtualenv, reinstalled when pyproject.toml changes.
stamp=".venv/.pyproject-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
    log "creating .venv and installing the pinned packages"
    [ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
    .venv/bin/pip install -q --upgrade pip >/dev/null
    .venv/bin/pip install -q ".[dev]"
    rm -f .venv/.pyproject-* && touch "$stamp"
fi

# 3. The Docker engine, then the sandbox image for this checkout.
scripts/ensure-docker.sh
.venv/bin/python -m sandbox.build
