"""The API client: every HTTP refusal becomes one line the learner can act on."""

from __future__ import annotations

from typing import Any

import httpx

from .config import Login
from .errors import CliError

TIMEOUT_S = 30.0


class Api:
    def __init__(self, login: Login, transport: httpx.BaseTransport | None = None) -> None:
        self.server = login.server.rstrip("/")
        self._http = httpx.Client(
            base_url=f"{self.server}/api/v1",
            headers={"Authorization": f"Bearer {login.token}", "User-Agent": "dojo-cli/0.1"},
            timeout=TIMEOUT_S,
            transport=transport,
        )

    def request(self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None, allow: tuple[int, ...] = ()) -> httpx.Response:
        try:
            response = self._http.request(method, path, json=json, params=params)
        except httpx.TransportError as exc:
            raise CliError(f"Cannot reach the server {self.server}: {exc.__class__.__name__}: {exc or 'no answer'}.") from None
        if response.status_code < 400 or response.status_code in allow:
            return response
        raise refusal(response)

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params or None).json()


def refusal(response: httpx.Response) -> CliError:
    """The API's ``{error, code}`` as one line; the token's refusals say what to do."""
    try:
        body = response.json()
        message, code = str(body.get("error") or body), str(body.get("code", ""))
    except ValueError:
        message, code = f"the server answered {response.status_code} {response.reason_phrase}", ""
    if response.status_code == 401:
        return CliError(f"Your token was refused: {message} Then run `dojo login` again.")
    if response.status_code == 403 and code == "scope":
        return CliError(f"{message} Make one on the API tokens page and run `dojo login` again.")
    retry = response.headers.get("Retry-After")
    suffix = f" (try again in {retry} s)" if retry and retry not in message else ""
    return CliError(f"{message}{suffix}", exit_code=2)
