"""The learner side: runs as the unprivileged learner uid.

A small fork server. It imports torch once, then for each session the
harness asks for, forks a child that executes the submitted source as the
module ``solution`` and answers calls until told to end. A fresh child per
session gives each isolated test a clean interpreter without paying for the
torch import again. After each child ends, the server tells the harness how.
"""

from __future__ import annotations

import linecache
import os
import socket
import sys
import traceback
import types
from typing import Any

from .protocol import ChannelClosed, decode_value, encode_value, recv_message, send_message

SOLUTION_PATH = "/work/learner/solution.py"
MAX_TEXT = 8000


def _warm_imports() -> None:
    try:
        import numpy  # noqa: F401
        import torch  # noqa: F401
    except ImportError:  # pragma: no cover - both are in the image
        pass


def _exception_info(exc: BaseException) -> dict[str, Any]:
    # Drop the frames of this module so the learner sees only their own code.
    tb = traceback.extract_tb(exc.__traceback__)
    frames = [frame for frame in tb if frame.filename == SOLUTION_PATH]
    text = "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(exc), exc))
    return {
        "type": type(exc).__name__,
        "mro": [cls.__name__ for cls in type(exc).__mro__],
        "message": str(exc)[:MAX_TEXT],
        "traceback": text[-MAX_TEXT:],
    }


class _Session:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.handles: dict[int, Any] = {}
        self.module = types.ModuleType("solution")

    def _to_handle(self, value: Any) -> dict[str, Any]:
        handle_id = len(self.handles) + 1
        self.handles[handle_id] = value
        return {"__t": "handle", "id": handle_id, "type": type(value).__name__}

    def _from_tag(self, data: dict[str, Any]) -> Any:
        if data.get("__t") == "ref" and data.get("id") in self.handles:
            return self.handles[data["id"]]
        raise ValueError("unknown value in arguments")

    def load(self, source: str) -> None:
        lines = source.splitlines(keepends=True)
        linecache.cache[SOLUTION_PATH] = (len(source), None, lines, SOLUTION_PATH)
        self.module.__file__ = SOLUTION_PATH
        sys.modules["solution"] = self.module
        code = compile(source, SOLUTION_PATH, "exec")
        exec(code, self.module.__dict__)

    def target(self, target_id: Any) -> Any:
        if target_id is None:
            return self.module
        return self.handles[int(target_id)]

    def serve(self) -> None:
        while True:
            message = recv_message(self.sock)
            op = message.get("op")
            call_id = message.get("id")
            if op == "end":
                send_message(self.sock, {"id": call_id, "ok": True, "ended": True})
                return
            try:
                target = self.target(message.get("target"))
                value = getattr(target, str(message.get("attr")))
                if op == "call":
                    args = decode_value(message.get("args", []), self._from_tag)
                    kwargs = decode_value(message.get("kwargs", {"__t": "dict", "v": []}), self._from_tag)
                    value = value(*args, **kwargs)
                    reply = {"id": call_id, "ok": True, "value": encode_value(value, self._to_handle)}
                elif op == "getattr":
                    if callable(value):
                        reply = {"id": call_id, "ok": True, "callable": True, "type": type(value).__name__}
                    else:
                        reply = {"id": call_id, "ok": True, "value": encode_value(value, self._to_handle)}
                else:
                    reply = {"id": call_id, "ok": False, "exc": {"type": "RuntimeError", "mro": ["RuntimeError"], "message": f"unknown op {op!r}", "traceback": ""}}
            except BaseException as exc:  # noqa: BLE001 - everything the learner raises is reported
                reply = {"id": call_id, "ok": False, "exc": _exception_info(exc)}
            _flush()
            send_message(self.sock, reply)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass


def _run_child(sock: socket.socket, source: str) -> None:
    session = _Session(sock)
    try:
        session.load(source)
    except BaseException as exc:  # noqa: BLE001 - SystemExit at import is an error too
        _flush()
        send_message(sock, {"ok": False, "exc": _exception_info(exc)})
        return
    _flush()
    send_message(sock, {"ok": True})
    session.serve()


def serve(sock: socket.socket) -> None:
    """Fork a child per session request; report each child's end."""
    _warm_imports()
    try:
        # The learner, not the harness, is the one to kill when memory runs out.
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write("1000")
    except OSError:
        pass
    while True:
        try:
            message = recv_message(sock)
        except ChannelClosed:
            return
        if message.get("op") != "session":
            continue
        source = str(message.get("source", ""))
        pid = os.fork()
        if pid == 0:
            try:
                _run_child(sock, source)
            except ChannelClosed:
                pass
            finally:
                _flush()
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        send_message(
            sock,
            {
                "op": "child_exit",
                "exitcode": os.waitstatus_to_exitcode(status),
            },
        )


def main(argv: list[str]) -> None:
    sock = socket.socket(fileno=int(argv[1]))
    os.chdir("/work/learner")
    sys.path.insert(0, "/work/learner")
    serve(sock)
