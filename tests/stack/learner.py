"""A learner's browser as a web process sees it behind the TLS load balancer.

Production serves HTTPS only (``HTTPS_ONLY``): the balancer ends TLS and
forwards plain HTTP with ``X-Forwarded-Proto: https``. This client stands in
for browser and balancer together: it talks HTTP to one web "host" or the
other, says the request came over HTTPS, sends the HTTPS Referer a browser
would, and keeps ``Secure`` cookies (the browser holds them for the site's
HTTPS origin, whichever web process the balancer picks).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from http.cookiejar import DefaultCookiePolicy
from typing import Any

import requests

_TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


# Secure cookies go out on these connections: they stand for the HTTPS leg.
_POLICY = DefaultCookiePolicy(secure_protocols=("https", "wss", "http"))


class _BehindTheBalancer(requests.Session):
    def __init__(self) -> None:
        super().__init__()
        self.cookies.set_policy(_POLICY)
        self.headers["X-Forwarded-Proto"] = "https"

    def prepare_request(self, request: requests.Request) -> requests.PreparedRequest:
        # requests builds each request's cookies in a jar of its own, with the
        # default policy; redirects copy that jar, policy included.
        prepared = super().prepare_request(request)
        prepared._cookies.set_policy(_POLICY)  # type: ignore[attr-defined]
        prepared.headers.pop("Cookie", None)
        prepared.prepare_cookies(prepared._cookies)  # type: ignore[attr-defined]
        return prepared


class Learner:
    def __init__(self) -> None:
        self.http = _BehindTheBalancer()
        self.username = ""

    def get(self, base: str, path: str, **kwargs: Any) -> requests.Response:
        return self.http.get(base + path, timeout=kwargs.pop("timeout", 30), **kwargs)

    def _post_form(self, base: str, path: str, data: dict[str, str]) -> requests.Response:
        page = self.get(base, path)
        page.raise_for_status()
        match = _TOKEN.search(page.text)
        assert match, f"no CSRF token on {path}"
        return self.http.post(base + path, data={**data, "csrfmiddlewaretoken": match.group(1)},
                              headers={"Referer": "https" + base.removeprefix("http") + path}, timeout=30)

    def sign_up(self, base: str, username: str, password: str) -> None:
        response = self._post_form(base, "/signup/", {"username": username, "password1": password, "password2": password})
        assert response.status_code == 200 and "Log out" in response.text, response.text[:2000]
        self.username = username

    def log_in(self, base: str, username: str, password: str) -> None:
        response = self._post_form(base, "/accounts/login/", {"username": username, "password": password})
        assert response.status_code == 200 and "Log out" in response.text, response.text[:2000]
        self.username = username

    def send(self, base: str, slug: str, kind: str, code: str) -> dict[str, Any]:
        """Press Run or Submit on ``base``; the 202 answer (state and events URLs)."""
        page = self.get(base, f"/rungs/{slug}/")
        page.raise_for_status()
        token = _TOKEN.search(page.text)
        version = re.search(r'data-version="(\d+)"', page.text)
        assert token and version, "the workspace page has no CSRF token or version"
        response = self.http.post(
            f"{base}/rungs/{slug}/{kind}",
            data={"code": code, "version": version.group(1)},
            headers={"X-CSRFToken": token.group(1), "Referer": f"https{base.removeprefix('http')}/rungs/{slug}/"},
            timeout=30,
        )
        assert response.status_code == 202, response.text[:2000]
        return dict(response.json())

    def follow(self, base: str, sent: dict[str, Any], timeout_s: float) -> tuple[dict[str, Any], list[str]]:
        """Follow a submission's live events on ``base`` as the page's
        EventSource does: on each ``changed``, fetch the state; reconnect when
        the server ends the stream. Returns the final state and the status
        fetched after each event."""
        statuses: list[str] = []
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.http.get(base + sent["events_url"], stream=True, timeout=(10, 40)) as stream:
                assert stream.status_code == 200, stream.text[:500]
                assert stream.headers["Content-Type"].startswith("text/event-stream")
                for event in _events(stream):
                    if event != "changed":
                        continue
                    state = dict(self.get(base, sent["state_url"]).json())
                    statuses.append(str(state["status"]))
                    if state["status"] == "done":
                        return state, statuses
            time.sleep(2)  # the stream's `retry:`
        raise AssertionError(f"no final state within {timeout_s:.0f} s; statuses seen: {statuses}")


def _events(response: requests.Response) -> Iterator[str]:
    """The event names of a server-sent event stream, as each event completes."""
    name = ""
    for raw in response.iter_lines(chunk_size=1024):
        line = raw.decode()
        if line == "":
            if name:
                yield name
            name = ""
        elif line.startswith("event:"):
            name = line.removeprefix("event:").strip()
