"""`make run` serves with DEBUG off (issue 55, finding 8): a newcomer's 404
is the site's own page, not Django's list of URL patterns, and the static
files come from whitenoise; `DEBUG=1 make run` gives the debug pages.

The server is started as scripts/run.sh starts it: its environment
(scripts/run-env.sh), collectstatic, then runserver."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / ".venv" / "bin" / "python"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(tmp_path: Path, redis_url: str, debug: str | None) -> Iterator[str]:
    port = _free_port()
    env = {key: value for key, value in os.environ.items() if key not in {"DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE", "PYTEST_CURRENT_TEST"}}
    env.update({"STATIC_ROOT": str(tmp_path / "static"), "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "REDIS_URL": redis_url, "PORT": str(port)})
    if debug is not None:
        env["DEBUG"] = debug
    python = PYTHON if PYTHON.exists() else Path("python3")
    script = (
        "source scripts/run-env.sh && "
        f'{{ [ "$DEBUG" = 1 ] || {python} manage.py collectstatic --noinput -v 0; }} && '
        f'exec {python} manage.py runserver "127.0.0.1:$PORT" --noreload'
    )
    server = subprocess.Popen(["bash", "-c", script], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                requests.get(f"{base}/healthz", timeout=2)
                break
            except requests.RequestException:
                assert server.poll() is None, "the server stopped"
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.2)
        yield base
    finally:
        os.killpg(server.pid, 15)
        server.wait(20)


@pytest.fixture
def run_server(tmp_path: Path, redis_url: str) -> Iterator[str]:
    yield from _serve(tmp_path, redis_url, debug=None)


@pytest.fixture
def debug_server(tmp_path: Path, redis_url: str) -> Iterator[str]:
    yield from _serve(tmp_path, redis_url, debug="1")


def test_make_run_answers_a_missing_page_with_the_sites_404_and_serves_its_static_files(run_server: str) -> None:
    page = requests.get(f"{run_server}/no-such-page/", timeout=30)
    assert page.status_code == 404
    assert "There is nothing here" in page.text
    assert "URLconf" not in page.text and "admin/" not in page.text and "Traceback" not in page.text
    stylesheet = re.search(r'<link rel="stylesheet" href="([^"]+)"', page.text)
    assert stylesheet is not None
    assert re.fullmatch(r"/static/frontend/site\.[0-9a-f]{12}\.css", stylesheet.group(1)), stylesheet.group(1)  # collected, hashed
    served = requests.get(run_server + stylesheet.group(1), timeout=30)
    assert served.status_code == 200 and served.headers["Content-Type"].startswith("text/css")
    assert "immutable" in served.headers.get("Cache-Control", "")  # whitenoise's answer for a hashed name


def test_debug_1_make_run_gives_the_debug_pages(debug_server: str) -> None:
    page = requests.get(f"{debug_server}/no-such-page/", timeout=30)
    assert page.status_code == 404
    assert "URLconf" in page.text


def test_the_500_page_is_styled_in_the_sites_layout(rf: Any) -> None:
    from django.views.defaults import server_error

    page = server_error(rf.get("/boom"))
    assert page.status_code == 500
    body = page.content.decode()
    assert "Something went wrong on our side" in body and "site.css" in body
