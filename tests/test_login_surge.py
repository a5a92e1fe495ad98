"""A class logs in at once: 200 logins released together, no 5xx (issue 55).

Sessions are server-side now (frontend/sessions.py, in Redis). Two rounds
ago session writes in the database made a login surge fail on SQLite
("database is locked", issue 21); this pins that it holds on both
engines: it runs in the PostgreSQL pass and in the SQLite pass.

The logins go over HTTP to this process's WSGI application, served by at
most 64 request threads at once, as `make loadtest` serves it (gunicorn,
2 workers x 32 threads): a surge queues at the server, not in the database.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.core.handlers.wsgi import WSGIHandler
from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

pytestmark = [pytest.mark.sqlite_pass, pytest.mark.redis]

LEARNERS = 200
REQUEST_THREADS = 64
SURGE_BOUND_S = 60.0
PASSWORD = "surge-pass-5150"


class _GunicornSizedServer(ThreadedWSGIServer):
    """Django's threaded server, but at most REQUEST_THREADS requests at once; the rest wait in the listen backlog."""

    request_queue_size = LEARNERS * 2

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.slots = threading.BoundedSemaphore(REQUEST_THREADS)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        with self.slots:
            super().process_request_thread(request, client_address)


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def web(transactional_db: Any, settings: Any) -> Iterator[str]:
    # The hash is not what is tested here (the load test hashes for real).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    server = _GunicornSizedServer(("127.0.0.1", 0), _QuietHandler)
    server.set_app(WSGIHandler())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_two_hundred_logins_at_once_get_no_5xx(web: str) -> None:
    password = make_password(PASSWORD)
    get_user_model().objects.bulk_create(get_user_model()(username=f"surge{index:03d}", password=password) for index in range(LEARNERS))
    browsers = [requests.Session() for _ in range(LEARNERS)]
    for browser in browsers:
        # One request per connection: a kept-alive connection would hold a request thread.
        browser.headers["Connection"] = "close"
    tokens = []
    for browser in browsers:
        page = browser.get(f"{web}/accounts/login/", timeout=30)
        assert page.status_code == 200
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token is not None
        tokens.append(token.group(1))

    barrier = threading.Barrier(LEARNERS)
    answers: list[Any] = [None] * LEARNERS

    def log_in(index: int) -> None:
        barrier.wait()
        try:
            answers[index] = browsers[index].post(
                f"{web}/accounts/login/",
                data={"username": f"surge{index:03d}", "password": PASSWORD, "csrfmiddlewaretoken": tokens[index]},
                headers={"Referer": f"{web}/accounts/login/"},
                allow_redirects=False,
                timeout=SURGE_BOUND_S,
            )
        except requests.RequestException as exc:
            answers[index] = exc

    started = time.monotonic()
    threads = [threading.Thread(target=log_in, args=(index,)) for index in range(LEARNERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.monotonic() - started

    statuses = [answer.status_code if isinstance(answer, requests.Response) else repr(answer) for answer in answers]
    assert statuses == [302] * LEARNERS, {status: statuses.count(status) for status in set(map(str, statuses))}
    assert took < SURGE_BOUND_S
    # Each got a session of its own, on the server, that works.
    for index in (0, LEARNERS // 2, LEARNERS - 1):
        assert browsers[index].get(f"{web}/accounts/password_change/", allow_redirects=False, timeout=30).status_code == 200
    print(f"{LEARNERS} logins at once: {took:.1f} s")
