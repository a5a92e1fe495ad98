"""What the production settings turn on: persistent, checked PostgreSQL
connections, and HTTPS only behind the load balancer. Each case starts a
fresh interpreter, because settings are read once, at import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PG_URL = "postgres://dojo@db.example.org:5432/dojo"
_PRINT = """
import json, django
django.setup()
from django.conf import settings
db = settings.DATABASES["default"]
print(json.dumps({
    "conn_max_age": db.get("CONN_MAX_AGE", 0), "health_checks": db.get("CONN_HEALTH_CHECKS", False),
    "ssl_redirect": settings.SECURE_SSL_REDIRECT, "session_secure": settings.SESSION_COOKIE_SECURE,
    "csrf_secure": settings.CSRF_COOKIE_SECURE, "hsts": settings.SECURE_HSTS_SECONDS,
    "subdomains": settings.SECURE_HSTS_INCLUDE_SUBDOMAINS, "proxy_header": settings.SECURE_PROXY_SSL_HEADER,
}))
"""


def _run(**env: str) -> subprocess.CompletedProcess[str]:
    base = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "HTTPS_ONLY", "DATABASE_CONN_MAX_AGE", "TRUST_X_FORWARDED_PROTO"}}
    return subprocess.run(
        [sys.executable, "-c", _PRINT], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "x", "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}", **env},
    )


def _settings(**env: str) -> dict[str, Any]:
    out = _run(**env)
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_postgresql_connections_persist_for_a_minute_and_are_checked_before_reuse():
    loaded = _settings(DATABASE_URL=PG_URL)
    assert (loaded["conn_max_age"], loaded["health_checks"]) == (60, True)


def test_database_conn_max_age_zero_closes_the_connection_after_each_request():
    assert _settings(DATABASE_URL=PG_URL, DATABASE_CONN_MAX_AGE="0")["conn_max_age"] == 0


def test_database_conn_max_age_zero_applies_to_sqlite_too():
    assert _settings(DATABASE_CONN_MAX_AGE="0")["conn_max_age"] == 0


def test_a_negative_database_conn_max_age_stops_start_up_with_its_name():
    out = _run(DATABASE_URL=PG_URL, DATABASE_CONN_MAX_AGE="-5")
    assert out.returncode != 0
    assert "DATABASE_CONN_MAX_AGE='-5' is not a whole number >= 0" in out.stderr


def test_by_default_sqlite_keeps_its_connection_and_http_is_served():
    # `make run`, the test suite and the load test serve plain HTTP on 127.0.0.1.
    loaded = _settings()
    # A thread's SQLite connection serves its next request too (bench/experiments/web_cost.py).
    assert (loaded["conn_max_age"], loaded["health_checks"]) == (60, False)
    assert not (loaded["ssl_redirect"] or loaded["session_secure"] or loaded["csrf_secure"] or loaded["hsts"] or loaded["proxy_header"])


def test_https_only_sends_cookies_over_https_redirects_http_and_asks_for_hsts():
    loaded = _settings(HTTPS_ONLY="1")
    assert loaded["ssl_redirect"] and loaded["session_secure"] and loaded["csrf_secure"]
    assert (loaded["hsts"], loaded["subdomains"]) == (3600, True)
    # TLS ended by gunicorn itself: a client's X-Forwarded-Proto means nothing.
    assert loaded["proxy_header"] is None
    behind_a_balancer = _settings(HTTPS_ONLY="1", TRUST_X_FORWARDED_PROTO="1")
    assert behind_a_balancer["proxy_header"] == ["HTTP_X_FORWARDED_PROTO", "https"]


def test_a_malformed_https_only_stops_start_up():
    out = _run(HTTPS_ONLY="yes please")
    assert out.returncode != 0 and "HTTPS_ONLY='yes please' is not a boolean" in out.stderr
