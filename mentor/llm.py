"""A minimal client for an OpenAI-compatible chat-completions endpoint (vLLM,
llama.cpp server, Ollama, ...), on the standard library only.

``http.client`` rather than ``urllib``: no proxy variables or other URL
schemes are picked up from the environment, and a streamed body is read line
by line as it arrives. Every failure becomes a ``ModelError`` whose message is
for the learner; the detail goes to the log.
"""

from __future__ import annotations

import http.client
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from core.write_guard import outside_write_transaction

from . import messages
from .exceptions import ModelError

log = logging.getLogger(__name__)

# A streamed reply line longer than this is not a chat-completions chunk.
_MAX_LINE = 1024 * 1024
_MAX_BODY = 4 * 1024 * 1024


@dataclass(frozen=True)
class Endpoint:
    url: str
    model: str
    api_key: str
    timeout_s: float
    max_tokens: int

    @classmethod
    def from_settings(cls) -> Endpoint | None:
        """The configured endpoint, or None when the mentor answers without a model."""
        if not settings.MENTOR_LLM_URL:
            return None
        return cls(
            url=settings.MENTOR_LLM_URL,
            model=settings.MENTOR_LLM_MODEL,
            api_key=settings.MENTOR_LLM_API_KEY,
            timeout_s=settings.MENTOR_LLM_TIMEOUT_S,
            max_tokens=settings.MENTOR_LLM_MAX_TOKENS,
        )


def completions_path(base_url: str) -> tuple[str, str, int | None, str]:
    """(scheme, host, port, path) of ``<base>/v1/chat/completions``; a base already ending in /v1 is kept."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        path += "/v1"
    return parts.scheme, parts.hostname or "", parts.port, path + "/chat/completions"


def _connect(endpoint: Endpoint) -> tuple[http.client.HTTPConnection, str]:
    scheme, host, port, path = completions_path(endpoint.url)
    connection_class = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
    # NOTE: the timeout bounds the connect and every single read, so a server
    # that stalls mid-stream is noticed as well as one that never answers.
    return connection_class(host, port, timeout=endpoint.timeout_s), path


def _request(endpoint: Endpoint, chat: list[dict[str, str]], *, stream: bool) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    connection, path = _connect(endpoint)
    body = json.dumps(
        {"model": endpoint.model, "messages": chat, "stream": stream, "temperature": 0.2, "max_tokens": endpoint.max_tokens}
    ).encode()
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream" if stream else "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
    except TimeoutError as exc:
        connection.close()
        raise ModelError(messages.MODEL_TIMEOUT, f"timeout: {exc}") from exc
    except OSError as exc:  # refused, unreachable, DNS, TLS
        connection.close()
        raise ModelError(messages.MODEL_UNREACHABLE, f"{type(exc).__name__}: {exc}") from exc
    except http.client.HTTPException as exc:
        connection.close()
        raise ModelError(messages.MODEL_BAD_REPLY, f"{type(exc).__name__}: {exc}") from exc
    if response.status != 200:
        detail = response.read(2000).decode("utf-8", "replace")
        connection.close()
        raise ModelError(messages.MODEL_HTTP_ERROR.format(status=response.status), f"HTTP {response.status}: {detail}")
    return connection, response


@outside_write_transaction
def complete(endpoint: Endpoint, chat: list[dict[str, str]]) -> str:
    """The model's whole answer to ``chat`` in one reply."""
    connection, response = _request(endpoint, chat, stream=False)
    try:
        raw = response.read(_MAX_BODY)
    except TimeoutError as exc:
        raise ModelError(messages.MODEL_TIMEOUT, f"timeout reading: {exc}") from exc
    except (OSError, http.client.HTTPException) as exc:
        raise ModelError(messages.MODEL_BAD_REPLY, f"{type(exc).__name__}: {exc}") from exc
    finally:
        connection.close()
    try:
        data: Any = json.loads(raw)
        content = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ModelError(messages.MODEL_BAD_REPLY, f"unreadable reply: {raw[:500]!r}") from exc
    if not isinstance(content, str) or not content.strip():
        raise ModelError(messages.MODEL_BAD_REPLY, "empty answer")
    return content


@outside_write_transaction
def stream(endpoint: Endpoint, chat: list[dict[str, str]]) -> Iterator[str]:
    """The model's answer to ``chat`` as it arrives, piece by piece (server-sent events).

    Raises ``ModelError`` before the first piece when the request fails, or
    between pieces when the stream breaks off.
    """
    connection, response = _request(endpoint, chat, stream=True)
    try:
        yielded = False
        while True:
            try:
                line = response.readline(_MAX_LINE)
            except TimeoutError as exc:
                raise ModelError(messages.MODEL_TIMEOUT if not yielded else messages.MODEL_STOPPED, f"timeout: {exc}") from exc
            except (OSError, http.client.HTTPException) as exc:
                raise ModelError(messages.MODEL_STOPPED, f"{type(exc).__name__}: {exc}") from exc
            if not line:
                if not yielded:
                    raise ModelError(messages.MODEL_BAD_REPLY, "the stream ended before any answer")
                return  # some servers close without [DONE]
            text = line.decode("utf-8", "replace").strip()
            if not text.startswith("data:"):
                continue  # blank separators, comments, "event:" lines
            payload = text[5:].strip()
            if payload == "[DONE]":
                if not yielded:
                    raise ModelError(messages.MODEL_BAD_REPLY, "the stream ended before any answer")
                return
            try:
                chunk: Any = json.loads(payload)
                choices = chunk.get("choices") or []
                piece = (choices[0].get("delta") or {}).get("content") if choices else None
            except (ValueError, AttributeError, TypeError) as exc:
                raise ModelError(messages.MODEL_BAD_REPLY, f"unreadable chunk: {payload[:300]!r}") from exc
            if isinstance(piece, str) and piece:
                yielded = True
                yield piece
    finally:
        connection.close()
