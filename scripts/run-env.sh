# The environment of `make run` (sourced by scripts/run.sh, and by
# tests/test_run_script.py to start the same server): DEBUG off, so a
# newcomer sees the site's own error pages and never a traceback or the URL
# patterns; static files through whitenoise. `DEBUG=1 make run` gives a
# developer Django's debug pages.
export DEBUG="${DEBUG:-0}"
# DEBUG off needs a SECRET_KEY: one per checkout, made once and kept in var/.
if [ -z "${SECRET_KEY:-}" ]; then
    mkdir -p var
    [ -s var/secret_key ] || (umask 077 && head -c 48 /dev/urandom | base64 | tr -d '\n' >var/secret_key)
    SECRET_KEY="$(cat var/secret_key)"
    export SECRET_KEY
fi
PORT="${PORT:-8000}"
REDIS_PORT="${REDIS_PORT:-6390}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:${REDIS_PORT}/0}"
export PYTHONPATH="$PWD:$PWD/platform"
