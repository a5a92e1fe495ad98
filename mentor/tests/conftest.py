"""Fixtures of the mentor's tests: the shipped module, and a stand-in for an
OpenAI-compatible model server on 127.0.0.1 (a random port, in a thread)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

ANSWER_PIECES = ["Decoding reads ", "every weight ", "once per token [1]."]


class FakeModelServer(ThreadingHTTPServer):
    daemon_threads = True
    # "ok", "error" (HTTP 500), "slow" (sleeps past the client's timeout),
    # "break" (streams one piece, then stalls past the timeout).
    mode = "ok"
    delay_s = 2.0

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers_seen: list[dict[str, str]] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: FakeModelServer
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        self.server.paths.append(self.path)
        self.server.headers_seen.append(dict(self.headers))
        mode = self.server.mode
        if mode == "error":
            self._send(500, "application/json", b'{"error": "model crashed"}')
            return
        if mode == "slow":
            time.sleep(self.server.delay_s)
        if not body.get("stream"):
            reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "".join(ANSWER_PIECES)}, "finish_reason": "stop"}]}
            self._send(200, "application/json", json.dumps(reply).encode())
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        first = {"choices": [{"index": 0, "delta": {"role": "assistant"}}]}
        self.wfile.write(f"data: {json.dumps(first)}\n\n".encode())
        for n, piece in enumerate(ANSWER_PIECES):
            chunk = {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
            if mode == "break" and n == 0:
                time.sleep(self.server.delay_s)
                return
        self.wfile.write(b"data: [DONE]\n\n")

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def model_server() -> Iterator[FakeModelServer]:
    server = FakeModelServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def with_model(settings: Any, model_server: FakeModelServer) -> FakeModelServer:
    settings.MENTOR_LLM_URL = model_server.base_url
    settings.MENTOR_LLM_MODEL = "test-model"
    settings.MENTOR_LLM_API_KEY = "test-key"
    settings.MENTOR_LLM_TIMEOUT_S = 0.5
    return model_server


@pytest.fixture
def module(catalog: Any) -> Any:
    from exercises.models import Module

    return Module.objects.get(slug="inference-and-serving")
