"""The learner side: runs as the unprivileged learner uid.

A small fork server. It imports torch once, then for each session the
harness asks for, forks a child that executes the submitted source as the
module ``solution`` and answers calls until told to end. A fresh child per
session gives each isolated test a clean interpreter without paying for the
torch import again. After each child ends, the server kills whatever the
child left running, deletes its files, and tells the harness how it ended.
"""

from __future__ import annotations

import ctypes
import linecache
import os
import socket
import sys
import traceback
import types
from typing import Any

from .gpu_timing import call_on_device
from .protocol import (
    MAX_CHANGED_ARGUMENTS,
    MAX_MESSAGE_BYTES,
    MAX_REQUEST_BYTES,
    ChannelClosed,
    FrameReader,
    ProtocolError,
    decode_value,
    encode_value,
    matches_encoding,
    send_message,
)
from .scrub import scrub

SOLUTION_PATH = "/work/learner/solution.py"
MAX_TEXT = 8000
PR_SET_DUMPABLE = 4
PR_SET_THP_DISABLE = 41


def warm_imports() -> None:
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
        self.reader = FrameReader(sock, MAX_REQUEST_BYTES)
        self.handles: dict[int, Any] = {}
        self.module = types.ModuleType("solution")
        # The last call's request and the arguments it got, for ``changed``.
        self._last_call: tuple[dict[str, Any], Any, Any] | None = None

    def _to_handle(self, value: Any) -> dict[str, Any]:
        handle_id = len(self.handles) + 1
        self.handles[handle_id] = value
        return {"__t": "handle", "id": handle_id, "type": type(value).__name__}

    def _from_tag(self, data: dict[str, Any]) -> Any:
        if data.get("__t") == "ref" and data.get("id") in self.handles:
            return self.handles[data["id"]]
        raise ValueError("unknown value in arguments")

    # --- arguments the last call changed in place ----------------------------
    # Arguments reach the learner's code as copies, so a test never sees the
    # learner change them. Asked (op ``changed``), this process says which
    # ones the last call changed (``grading.assert_arguments_unchanged``),
    # and only that: writing the change back would let the code alter what a
    # test then hands to the reference. Each argument is compared with the
    # frame it came in.

    def _changed(self, message: dict[str, Any], args: Any, kwargs: Any) -> list[int | str]:
        changed: list[int | str] = []
        args_data = message.get("args")
        if isinstance(args, list) and isinstance(args_data, list):
            changed += [index for index, (value, data) in enumerate(zip(args[:MAX_CHANGED_ARGUMENTS], args_data, strict=False)) if not self._unchanged(value, data)]
        kwargs_data = message.get("kwargs")
        pairs = kwargs_data.get("v") if isinstance(kwargs_data, dict) else None
        if isinstance(kwargs, dict) and isinstance(pairs, list):
            for pair in pairs[:MAX_CHANGED_ARGUMENTS]:
                name = pair[0] if isinstance(pair, list) and len(pair) == 2 else None
                if isinstance(name, str) and name in kwargs and not self._unchanged(kwargs[name], pair[1]):
                    changed.append(name)
        return changed

    def _unchanged(self, value: Any, data: Any) -> bool:
        try:
            return matches_encoding(value, data, self.handles.get)
        except Exception:  # noqa: BLE001 - a value that breaks the comparison has changed into something else
            return False

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

    def _answer(self, op: Any, call_id: Any, message: dict[str, Any]) -> dict[str, Any]:
        """The reply to a ``call``, ``callref``, ``getref`` or ``getattr`` request (what the learner's code raises propagates)."""
        target = self.target(message.get("target"))
        value = getattr(target, str(message.get("attr")))
        if op in ("call", "callref"):
            # Tensors the tests made on the GPU arrive on this process's GPU.
            args = decode_value(message.get("args", []), self._from_tag, to_device=True)
            kwargs = decode_value(message.get("kwargs", {"__t": "dict", "v": []}), self._from_tag, to_device=True)
            self._last_call = (message, args, kwargs)
            if op == "call" and message.get("timed") is True:
                # The speed phase's timed call where a GPU is seen: the device synchronised around it (``gpu_timing``).
                value, gpu_s = call_on_device(value, args, kwargs)
                reply = {"id": call_id, "ok": True, "value": encode_value(value, self._to_handle)}
                return reply if gpu_s is None else {**reply, "gpu_s": gpu_s}
            value = value(*args, **kwargs)
            # ``callref``: the object returned itself, not a copy (``grading.call_by_reference``).
            return {"id": call_id, "ok": True, "value": self._to_handle(value) if op == "callref" else encode_value(value, self._to_handle)}
        if op == "getref":
            # The object itself, not a copy (``grading.by_reference``).
            return {"id": call_id, "ok": True, "value": self._to_handle(value)}
        if op == "getattr":
            if callable(value):
                return {"id": call_id, "ok": True, "callable": True, "type": type(value).__name__}
            return {"id": call_id, "ok": True, "value": encode_value(value, self._to_handle)}
        return {"id": call_id, "ok": False, "exc": {"type": "RuntimeError", "mro": ["RuntimeError"], "message": f"unknown op {op!r}", "traceback": ""}}

    def serve(self) -> None:
        while True:
            message = self.reader.message()
            op = message.get("op")
            call_id = message.get("id")
            if op == "end":
                send_message(self.sock, {"id": call_id, "ok": True, "ended": True})
                return
            try:
                if op == "changed":
                    # Asked only by a test that checks (``grading.assert_arguments_unchanged``): no call pays for it.
                    reply = {"id": call_id, "ok": True, "value": self._changed(*self._last_call) if self._last_call else []}
                else:
                    reply = self._answer(op, call_id, message)
            except BaseException as exc:  # noqa: BLE001 - everything the learner raises is reported
                reply = {"id": call_id, "ok": False, "exc": _exception_info(exc)}
            _flush()
            try:
                send_message(self.sock, reply, MAX_MESSAGE_BYTES)
            except ProtocolError as exc:
                # Too big to grade: the learner's own error, as a fact the host words
                # (the harness raises it as a ValueError, ``proxy.ValueTooLarge``).
                too_big = {"type": "ValueError", "mro": ["ValueError"], "message": str(exc)[:MAX_TEXT], "traceback": "", "code": "value_too_large"}
                send_message(self.sock, {"id": call_id, "ok": False, "exc": too_big}, MAX_MESSAGE_BYTES)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass


def _run_child(sock: socket.socket) -> None:
    session = _Session(sock)
    message = session.reader.message()
    if message.get("op") != "load":
        return
    try:
        session.load(str(message.get("source", "")))
    except BaseException as exc:  # noqa: BLE001 - SystemExit at import is an error too
        _flush()
        send_message(sock, {"ok": False, "exc": _exception_info(exc)})
        return
    _flush()
    send_message(sock, {"ok": True})
    session.serve()


def _prctl(option: int, value: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - Linux always has prctl
        pass


def _set_not_dumpable() -> None:
    """Keep this server's memory and descriptors out of its children's reach.

    A non-dumpable process cannot be ptraced, nor its fds taken with
    pidfd_getfd, by another process of the same uid: a learner child cannot
    reach the control channel through its parent.
    """
    _prctl(PR_SET_DUMPABLE, 0)


def _no_new_huge_pages() -> None:
    """Learner processes get no new transparent huge pages (inherited by every fork).

    The harness's heap lives in huge pages (``SANDBOX_HUGE_PAGES``) and a
    learner process, a fork of it, inherits glibc's request for them: then
    each buffer that the learner's code (or torch, for each of its threads)
    allocates costs a whole 2 MiB page of the memory limit. A torch thread
    pool of 256 threads ran out of 512 MiB that way, where it needs 220 MiB
    in 4 KiB pages. Pages shared from the harness stay as they are (a write
    copies 4 KiB of them, as before), so the fork stays as cheap. The
    learner may turn this off for itself: its memory is counted against its
    own limit either way. Whatever the host's THP mode, a limit then means
    the same on every host.
    """
    _prctl(PR_SET_THP_DISABLE, 1)


def serve(control: socket.socket) -> None:
    """Fork a child per session request; after each, scrub and report its end.

    The harness sends, on the control channel, one byte carrying the
    learner end of a fresh socketpair for each session. The child closes the
    control channel before any learner code runs, so only this server can
    write ``child_exit`` there. After the child ends, every other process of
    the learner uid is killed and its files are deleted, so the next session
    starts from nothing the previous one left.
    """
    _set_not_dumpable()
    _no_new_huge_pages()
    while True:
        try:
            _, fds, _, _ = socket.recv_fds(control, 1, 1)
        except OSError:
            return
        if not fds:
            return  # the harness closed the channel
        session_sock = socket.socket(fileno=fds[0])
        for extra in fds[1:]:
            os.close(extra)
        pid = os.fork()
        if pid == 0:
            control.close()
            try:
                _run_child(session_sock)
            except ChannelClosed:
                pass
            finally:
                _flush()
                os._exit(0)
        session_sock.close()
        _, status = os.waitpid(pid, 0)
        scrub()
        send_message(control, {"op": "child_exit", "exitcode": os.waitstatus_to_exitcode(status)})


def main(control: socket.socket) -> None:
    """Run as a fork of the launcher that has just become the learner uid."""
    os.chdir("/work/learner")
    sys.path.insert(0, "/work/learner")
    serve(control)
