"""Harness-side proxies that forward calls to the learner process."""

from __future__ import annotations

import builtins
import math
import secrets
import select
import socket
import threading
import time
from typing import Any

from .protocol import (
    MAX_CHANGED_ARGUMENTS,
    ChannelClosed,
    FrameReader,
    ProtocolError,
    decode_value,
    encode_frame,
    encode_value,
    parse_message,
    recv_message,
)
from .tape import Recorder, load_digest


class JobTimeout(Exception):
    """The job's wall-clock budget ran out while waiting for the learner."""


class OutputFlood(Exception):
    """The learner printed more than the output cap."""


# Why the learner's code failed, as the host reads it (``sandbox.jobs.Failure``):
# a code and facts, never a sentence (the host words it, grader.messages).
FailureRecord = dict[str, Any]
MAX_DETAIL = 300


def failure_record(code: str, *, exitcode: int | None = None, traceback: str = "", detail: str = "") -> FailureRecord:
    """The record of one failure: ``exitcode`` as the fork server reports it
    (negative: the signal that killed the process)."""
    record: FailureRecord = {"code": code, "traceback": traceback, "detail": detail[:MAX_DETAIL]}
    if exitcode is not None:
        record["signal" if exitcode < 0 else "status"] = abs(exitcode)
    return record


class LearnerDied(Exception):
    """The learner's process ended in the middle of a session (``exitcode`` None: it stopped answering)."""

    code = "learner_died"

    def __init__(self, exitcode: int | None) -> None:
        self.exitcode = exitcode
        self.detail = ""
        super().__init__(self.code if exitcode is None else f"{self.code} (exit code {exitcode})")

    def failure(self, traceback: str = "") -> FailureRecord:
        return failure_record(self.code, exitcode=self.exitcode, traceback=traceback, detail=self.detail)


class ChannelBroken(LearnerDied):
    """The learner side wrote something that is not a message on the channel.

    Its code can reach its own end of the socketpair (an inherited
    descriptor); junk there is the learner's fault, never the grader's.
    """

    code = "channel_broken"

    def __init__(self, detail: str) -> None:
        Exception.__init__(self, f"{self.code}: {detail}")
        self.exitcode = None
        self.detail = detail


class ServerDied(LearnerDied):
    """The learner's fork server ended: the learner's code killed or ended it."""

    code = "server_died"


class SolutionImportError(Exception):
    """The submitted source failed to run as a module."""

    code = "load_error"

    def __init__(self, info: dict[str, Any]) -> None:
        self.info = info
        super().__init__(str(info.get("traceback") or info.get("message") or "import failed"))

    def failure(self) -> FailureRecord:
        return failure_record(self.code, traceback=str(self))


class InvalidReturn(TypeError):
    """The learner returned something that is not plain data (``detail``: why, if known)."""

    code = "invalid_return"

    def __init__(self, detail: str = "") -> None:
        super().__init__(f"{self.code}: {detail}" if detail else self.code)
        self.detail = detail

    def failure(self) -> FailureRecord:
        return failure_record(self.code, detail=self.detail)


class ValueTooLarge(ValueError):
    """The learner returned a value too large to send back (the learner's
    side says so in its reply). A ValueError, as it always was to the tests."""

    code = "value_too_large"

    def __init__(self, detail: str) -> None:
        super().__init__(f"{self.code}: {detail}")
        self.detail = detail

    def failure(self) -> FailureRecord:
        return failure_record(self.code, detail=self.detail)


class LearnerException(Exception):
    """An exception of a type that is not a builtin, raised by learner code."""


# Rebuilt as themselves: builtin exceptions, but not AssertionError (a test's
# own failure) nor StopIteration and StopAsyncIteration, which end a loop
# silently: a hidden test written ``for got, want in zip(map(solution.f, xs),
# expected)`` would stop at the first call that raised one, and pass.
_BUILTIN_EXCEPTIONS: dict[str, type[BaseException]] = {
    name: obj
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, Exception) and not issubclass(obj, (AssertionError, StopIteration, StopAsyncIteration))
}


def _exception_info(value: Any) -> dict[str, Any]:
    """A reply's description of an exception: what the learner's process sent, if a dict, else nothing.

    The learner's code can write its own replies: an ``exc`` that is a
    string or a list must not crash the harness (a Submit's re-run reported
    as our failure, ``harness_crashed``, instead of the learner's).
    """
    return value if isinstance(value, dict) else {}


def _rebuild_exception(info: dict[str, Any]) -> BaseException:
    """Re-raise a learner exception as the nearest builtin type by name."""
    message = str(info.get("message", ""))
    mro = info.get("mro")
    names = [str(name) for name in mro] if isinstance(mro, list) and mro else [str(info.get("type", ""))]
    exc: BaseException
    if names and names[0] in {"SystemExit", "KeyboardInterrupt"}:
        exc = LearnerDied(0)
    elif info.get("code") == ValueTooLarge.code:
        # The learner's side could not send what the call returned.
        exc = ValueTooLarge(message)
    else:
        cls = next((_BUILTIN_EXCEPTIONS[name] for name in names if name in _BUILTIN_EXCEPTIONS), LearnerException)
        try:
            exc = cls(f"{info.get('type')}: {message}" if cls is LearnerException else message)
        except Exception:  # noqa: BLE001 - some builtins need more arguments
            exc = LearnerException(f"{info.get('type')}: {message}")
    exc.learner_traceback = str(info.get("traceback", ""))  # type: ignore[attr-defined]
    return exc


def _changed_arguments(value: Any) -> list[int | str]:
    """A reply's list of changed arguments, kept only as small ints and short names."""
    if not isinstance(value, list):
        return []
    return [item for item in value[:MAX_CHANGED_ARGUMENTS] if (type(item) is int and 0 <= item < 1000) or (type(item) is str and len(item) <= 100)]


def _exit_code(value: Any) -> int | None:
    """A child's exit code as the server reported it, range-checked."""
    if isinstance(value, int) and not isinstance(value, bool) and -64 <= value <= 255:
        return value
    return None


class Channel:
    """The harness's end of one fork server's control channel.

    Each session gets its own socketpair, whose learner end travels to the
    server on this channel; the server's child closes the control channel
    before any learner code runs. So ``child_exit`` can only come from the
    server, and a frame that claims it on a session socket is junk. Every
    wait has the job's deadline and stops at once on an output flood.
    """

    def __init__(self, control: socket.socket, deadline: float, abort: threading.Event | None = None) -> None:
        self.control = control
        self.deadline = deadline
        self.abort = abort
        self.calls = 0
        self._used: set[int] = set()

    def next_id(self) -> int:
        """A fresh random id for one request.

        Not a counter: learner code can read the id of the request it is
        answering, and a count would tell a re-run's fresh process how many
        calls earlier tests made, that is, whether it is the first test, the
        very thing the re-run must keep from it. A replay resends the first
        run's ids, which say nothing either.
        """
        while True:
            call_id = secrets.randbits(52) + 1
            if call_id not in self._used:
                self._used.add(call_id)
                return call_id

    def _remaining(self) -> float:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise JobTimeout()
        return remaining

    def open_session(self) -> socket.socket:
        harness_end, learner_end = socket.socketpair()
        try:
            self.control.settimeout(self._remaining())
            socket.send_fds(self.control, [b"N"], [learner_end.fileno()])
        except TimeoutError as exc:
            harness_end.close()
            raise JobTimeout() from exc
        except OSError as exc:
            harness_end.close()
            raise ServerDied(None) from exc
        finally:
            learner_end.close()
        # Never blocks: every wait is a select with the job's deadline, so a
        # send or a read costs one system call, not a timeout set and a poll
        # before each.
        harness_end.setblocking(False)
        return harness_end

    def send(self, sock: socket.socket, message: dict[str, Any]) -> None:
        """Send on a session socket (non-blocking), waiting while the learner does not read."""
        self.send_frame(sock, encode_frame(message))

    def send_frame(self, sock: socket.socket, frame: bytes) -> None:
        """Send an encoded frame on a session socket (see ``send``)."""
        data = memoryview(frame)
        while data:
            try:
                data = data[sock.send(data) :]
            except BlockingIOError:
                self._wait([], [sock])
            except OSError as exc:
                raise LearnerDied(None) from exc

    def _wait(self, readers: list[socket.socket], writers: list[socket.socket]) -> list[socket.socket]:
        # Wait in short slices so an output flood ends the wait at once.
        while True:
            remaining = self._remaining()
            if self.abort is not None and self.abort.is_set():
                raise OutputFlood()
            readable, writable, _ = select.select(readers, writers, [], min(remaining, 0.1))
            if readable or writable:
                return readable

    def _wait_readable(self, socks: list[socket.socket]) -> list[socket.socket]:
        return self._wait(socks, [])

    def _control_message(self) -> int | None:
        """Read the server's next report: the exit code of the session's child."""
        self.control.settimeout(self._remaining())
        try:
            message = recv_message(self.control)
        except TimeoutError as exc:
            raise JobTimeout() from exc
        except (ProtocolError, OSError) as exc:
            # The server closed its end: learner code killed it.
            raise ServerDied(None) from exc
        if message.get("op") != "child_exit":
            raise ServerDied(None)
        return _exit_code(message.get("exitcode"))

    def wait_exit(self) -> int | None:
        """Wait for the server to report that the session's child ended."""
        self._wait_readable([self.control])
        return self._control_message()

    def recv(self, reader: FrameReader) -> dict[str, Any]:
        """The next message on a session socket; LearnerDied once its child ended."""
        return self.recv_with_body(reader)[1]

    def recv_with_body(self, reader: FrameReader) -> tuple[bytes | bytearray, dict[str, Any]]:
        """``recv``, and the frame's body as it came (for the re-run's digests)."""
        sock = reader.sock
        try:
            while (body := reader.next_frame()) is None:
                readable = self._wait_readable([sock, self.control])
                # The session first: a child may answer, then end (a failed import).
                if sock not in readable:
                    raise LearnerDied(self._control_message())
                try:
                    reader.fill()
                except BlockingIOError:
                    continue
                except (ChannelClosed, OSError) as exc:
                    # The child (or everything holding its socket) ended: the server says how.
                    raise LearnerDied(self.wait_exit()) from exc
            message = parse_message(body)
        except ProtocolError as exc:
            raise ChannelBroken(str(exc)) from exc
        if "op" in message:
            raise ChannelBroken(f"a frame claiming to be {str(message.get('op'))[:40]!r}")
        return body, message

    def server_alive(self) -> bool:
        """False when the server has closed the control channel or sent something unasked."""
        readable, _, _ = select.select([self.control], [], [], 0)
        return not readable


class LearnerSession:
    """One forked learner child holding one import of the solution.

    ``recorder`` (a Submit's first run): every call of a test is taped, with
    a digest of its reply, for the re-run to replay (``replay``).
    """

    def __init__(self, channel: Channel, source: str, recorder: Recorder | None = None) -> None:
        self.channel = channel
        self.recorder = recorder
        self.ended = False
        self._callables: set[tuple[int | None, str]] = set()
        self.sock = channel.open_session()
        self.reader = FrameReader(self.sock)
        try:
            channel.send(self.sock, {"op": "load", "source": source})
            body, reply = self._reply_with_body(None)
        except LearnerDied:
            self._close()
            raise
        self.load_digest = load_digest(body)
        if not reply.get("ok"):
            self._expect_exit()
            raise SolutionImportError(_exception_info(reply.get("exc")))

    def _close(self) -> None:
        self.ended = True
        self.sock.close()

    def _expect_exit(self) -> None:
        self._close()
        self.channel.wait_exit()

    def _reply(self, call_id: int | None) -> dict[str, Any]:
        return self._reply_with_body(call_id)[1]

    def _reply_with_body(self, call_id: int | None) -> tuple[bytes | bytearray, dict[str, Any]]:
        while True:
            try:
                body, message = self.channel.recv_with_body(self.reader)
            except LearnerDied:
                self._close()
                raise
            if call_id is None or message.get("id") == call_id:
                return body, message
            # A stale reply: ignore it and keep waiting for ours.

    def exchange(self, frame: bytes, call_id: int) -> tuple[bytes | bytearray, dict[str, Any]]:
        """Send an encoded request and return its reply, body and message (the re-run's replay)."""
        if self.ended:
            raise LearnerDied(None)
        self.channel.calls += 1
        self.channel.send_frame(self.sock, frame)
        return self._reply_with_body(call_id)

    def _decode(self, data: Any) -> Any:
        def on_tag(tag: dict[str, Any]) -> Any:
            if tag.get("__t") == "handle" and isinstance(tag.get("id"), int):
                return RemoteObject(self, tag["id"], str(tag.get("type", "object"))[:100])
            raise InvalidReturn()

        try:
            return decode_value(data, on_tag)
        except ProtocolError as exc:
            raise InvalidReturn(str(exc)) from exc

    def _encode(self, value: Any, refs: list[int]) -> Any:
        def on_object(obj: Any) -> dict[str, Any]:
            if isinstance(obj, RemoteObject) and obj._session is self:
                refs.append(obj._handle_id)
                return {"__t": "ref", "id": obj._handle_id}
            raise TypeError(f"cannot pass {type(obj).__name__} to the solution")

        return encode_value(value, on_object)

    def request(
        self, op: str, target: int | None, attr: str, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None, timed: bool = False
    ) -> dict[str, Any]:
        if self.ended:
            raise LearnerDied(None)
        call_id = self.channel.next_id()
        message: dict[str, Any] = {"op": op, "id": call_id, "target": target, "attr": attr}
        if timed:
            message["timed"] = True
        refs: list[int] = [] if target is None else [target]
        if op in ("call", "callref"):
            message["args"] = self._encode(list(args), refs)
            message["kwargs"] = self._encode(dict(kwargs or {}), refs)
        frame = encode_frame(message)
        # From here on, whatever the learner's code does may depend on the tests.
        self.channel.calls += 1
        self.channel.send_frame(self.sock, frame)
        body, reply = self._reply_with_body(call_id)
        if self.recorder is not None:
            self.recorder.note(frame, call_id, refs, body, reply)
        if not reply.get("ok"):
            raise _rebuild_exception(_exception_info(reply.get("exc")))
        return reply

    def call(self, target: int | None, attr: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._decode(self.request("call", target, attr, args, kwargs).get("value"))

    def call_on_device(self, attr: str, args: tuple[Any, ...]) -> tuple[Any, float | None]:
        """The speed phase's timed call on a GPU (``gpu_timing.call_on_device``): the value, and
        the span of the CUDA events taken in the learner's process, None unless a sane number.
        That span is the learner's process's word: it may only ever add to a clock read here."""
        reply = self.request("call", None, attr, args, {}, timed=True)
        span = reply.get("gpu_s")
        sane = type(span) is float and math.isfinite(span) and 0.0 <= span <= 3600.0
        return self._decode(reply.get("value")), span if sane else None

    def forget_callables(self) -> None:
        """Ask again whether an attribute is callable (each test does, when taped)."""
        self._callables.clear()

    def getattr(self, target: int | None, attr: str) -> Any:
        # A callable is looked up again by name at each call (in the learner's
        # process), so once ``solution.f`` was callable the harness need not
        # ask again: tests that call ``solution.f(...)`` a thousand times make
        # one round trip per call instead of two. Were ``f`` rebound to a
        # value later, the call would fail in the learner's code ("not
        # callable"), which fails the test as reading the value would.
        if (target, attr) in self._callables:
            return RemoteCallable(self, target, attr)
        reply = self.request("getattr", target, attr)
        if reply.get("callable"):
            self._callables.add((target, attr))
            return RemoteCallable(self, target, attr)
        return self._decode(reply.get("value"))

    def changed_arguments(self) -> list[int | str]:
        """Which arguments the last call changed in place, as the learner's process says:
        positions and keyword names (``grading.assert_arguments_unchanged``)."""
        return _changed_arguments(self.request("changed", None, "").get("value"))

    def getref(self, target: int | None, attr: str) -> RemoteObject:
        """The learner's own object behind ``attr``, as a handle, never a copy."""
        return self._handle(self.request("getref", target, attr))

    def callref(self, target: int | None, attr: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> RemoteObject:
        """What calling ``attr`` returns, as a handle to the learner's own object, never a copy."""
        return self._handle(self.request("callref", target, attr, args, kwargs))

    def _handle(self, reply: dict[str, Any]) -> RemoteObject:
        value = self._decode(reply.get("value"))
        if not isinstance(value, RemoteObject):
            raise InvalidReturn()
        return value

    def end(self) -> None:
        if self.ended:
            return
        try:
            call_id = self.channel.next_id()
            self.channel.send(self.sock, {"op": "end", "id": call_id})
            self._reply(call_id)
            self._expect_exit()
        except LearnerDied:
            pass


class RemoteCallable:
    def __init__(self, session: LearnerSession, target: int | None, attr: str) -> None:
        self._session = session
        self._target = target
        self._attr = attr

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._session.call(self._target, self._attr, args, kwargs)

    def __repr__(self) -> str:
        return f"<solution function {self._attr}>"


class _ByReference:
    """What ``grading``'s by-reference helpers ask of the solution module or an object of it."""

    _session: LearnerSession

    @property
    def _target(self) -> int | None:
        """The handle id of the object; None for the module."""
        return None

    def _dojo_by_reference(self, name: str) -> RemoteObject:
        return self._session.getref(self._target, name)

    def _dojo_call_by_reference(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> RemoteObject:
        return self._session.callref(self._target, name, args, kwargs)

    def _dojo_changed_arguments(self) -> list[int | str]:
        return self._session.changed_arguments()


class RemoteObject(_ByReference):
    """An object living in the learner process (e.g. an instance of their class).

    It compares equal only to itself: values are compared after fetching them
    as plain data, never by asking the learner's object.
    """

    def __init__(self, session: LearnerSession, handle_id: int, type_name: str) -> None:
        self._session = session
        self._handle_id = handle_id
        self._type_name = type_name

    @property
    def _target(self) -> int | None:
        return self._handle_id

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._session.getattr(self._handle_id, name)

    def __eq__(self, other: object) -> bool:
        return other is self

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<{self._type_name} object in your solution>"


class SolutionProxy(_ByReference):
    """What tests receive as the ``solution`` fixture: the learner's module."""

    def __init__(self, session: LearnerSession) -> None:
        self._session = session

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._session.getattr(None, name)

    def __repr__(self) -> str:
        return "<your solution module>"
