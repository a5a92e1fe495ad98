#!/usr/bin/env bash
# Run the platform for development: Redis on a project-owned port and data
# dir, a Celery worker and the web server. Ctrl-C stops everything started here.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh

# shellcheck source=scripts/run-env.sh
source scripts/run-env.sh
mkdir -p var/redis var/log

.venv/bin/python manage.py migrate --noinput
.venv/bin/python manage.py load_exercises
# With DEBUG off whitenoise serves the collected, hashed files (STATIC_ROOT).
[ "$DEBUG" = 1 ] || .venv/bin/python manage.py collectstatic --noinput -v 0

pids=()
cleanup() {
    trap - INT TERM EXIT
    echo "[run] stopping..."
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup INT TERM EXIT

# The web and the worker count their metrics into one folder, emptied at each start
# (docs/operations.md, "Metrics"; /metrics answers when METRICS_TOKEN is set).
rm -rf var/prometheus && mkdir -p var/prometheus
export PROMETHEUS_MULTIPROC_DIR="$PWD/var/prometheus"

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$PWD/var/redis" --appendonly yes --save "" >var/log/redis.log 2>&1 &
pids+=($!)
.venv/bin/celery -A config worker -Q run,submit,gpu,maintenance -c 2 -B -s var/celerybeat-schedule -l INFO >var/log/worker.log 2>&1 &
pids+=($!)
.venv/bin/python manage.py runserver "127.0.0.1:${PORT}" >var/log/web.log 2>&1 &
pids+=($!)

for _ in $(seq 60); do
    curl -fsS "http://127.0.0.1:${PORT}/healthz" >/dev/null 2>&1 && break
    sleep 0.5
done
echo
echo "  LLM Systems Dojo is running at http://127.0.0.1:${PORT}/"
echo "  Demo logins:"
.venv/bin/python manage.py create_demo_users | sed 's/^/    /'
echo "  Redis: ${REDIS_URL}   Logs: var/log/{web,worker,redis}.log   Ctrl-C stops everything."
echo
wait -n "${pids[@]}"
