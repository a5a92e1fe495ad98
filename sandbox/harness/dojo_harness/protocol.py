"""Framing and a plain-data codec for the harness <-> learner channel.

Only plain data crosses: None, bool, int, float, str, list, tuple, dict,
torch tensors and numpy arrays as raw bytes with dtype and shape. Nothing is
ever unpickled, so a learner object cannot run code in the harness, and a
value that arrives is a fresh object built by the harness: an "always equal"
object or a Tensor subclass cannot survive the trip.

A frame's body is its JSON, then, when the message holds tensors or arrays,
a NUL byte (never part of JSON text) and their raw bytes, one after the
other. The JSON names each one as ``{"__b": [offset, length]}`` in the
``data`` of its tensor or array. They used to travel as base64 inside the
JSON: a call that hands the learner 40 MiB of float16 probabilities (the
speculative-decoding rung's large vocabularies) took 0.55 to 0.64 s under
runc and 1.2 s under gVisor; as raw bytes it takes 0.07 to 0.08 s and 0.17
to 0.23 s (``bench/round_trips.py``). Each byte of that region belongs to
exactly one tensor, in order, with none left over, so a reply cannot name
the same 16 MiB a thousand times and make the harness rebuild 16 GiB.
"""

from __future__ import annotations

import json
import math
import socket
import struct
import sys
from collections.abc import Callable
from typing import Any

# A reply bigger than this is the learner's error, not a reason for the
# harness to run out of memory: decoding JSON costs several times its size.
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
# What the harness may send the learner's process (a test's inputs: trusted,
# and sometimes large, e.g. a 32k-token vocabulary of probabilities).
MAX_REQUEST_BYTES = 64 * 1024 * 1024
# Nesting deeper than this is refused before Python's recursion limit can be
# hit in the harness (a RecursionError there would look like our crash).
MAX_DEPTH = 64
# Digits of a JSON integer; Python refuses to parse ints of over 4300 digits.
MAX_INT_DIGITS = 1000
# Arguments (positions, then keywords) one ``changed`` answer may name.
MAX_CHANGED_ARGUMENTS = 64
_HEADER = struct.Struct("!I")
# Ends a frame's JSON when raw bytes follow it. JSON text never holds a NUL
# byte (a string's control characters are escaped).
BLOB_SEPARATOR = b"\x00"


class ProtocolError(Exception):
    """The other side sent something that is not a valid message."""


class ChannelClosed(ProtocolError):
    """The other side closed the channel (its process ended)."""


def _check_size(size: int, limit: int) -> None:
    if size > limit:
        raise ProtocolError(f"message of {size} bytes exceeds the {limit}-byte channel limit")


class Blob:
    """Raw bytes that travel after the frame's JSON (a tensor's or an array's data)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes | memoryview) -> None:
        self.data = data


def encode_frame(message: dict[str, Any], limit: int = MAX_REQUEST_BYTES) -> bytes:
    """One message as a frame: its length, then its JSON, then the raw bytes of its blobs."""
    blobs: list[memoryview] = []
    offset = 0

    def attach(value: Any) -> dict[str, Any]:
        nonlocal offset
        if not isinstance(value, Blob):
            raise TypeError(f"a {type(value).__name__} is not plain data")
        view = memoryview(value.data).cast("B")
        blobs.append(view)
        offset += view.nbytes
        return {"__b": [offset - view.nbytes, view.nbytes]}

    data = json.dumps(message, allow_nan=False, separators=(",", ":"), default=attach).encode("utf-8")
    if not blobs:
        _check_size(len(data), limit)
        return _HEADER.pack(len(data)) + data
    size = len(data) + len(BLOB_SEPARATOR) + offset
    _check_size(size, limit)
    return b"".join([_HEADER.pack(size), data, BLOB_SEPARATOR, *blobs])


def send_message(sock: socket.socket, message: dict[str, Any], limit: int = MAX_REQUEST_BYTES) -> None:
    sock.sendall(encode_frame(message, limit))


class FrameReader:
    """The frames arriving on one socket, taken in with as few ``recv`` calls as
    the data allows: a small message (almost every call's) in one, where
    reading its length and then its body took two.

    Reads never go past what the socket has (a recv returns what is there),
    and the buffer holds at most one frame of ``limit`` bytes and the chunk
    that completed it. A frame whose length says more than ``limit`` is
    refused before any of its body is read. A body longer than ``CHUNK`` is
    read in place, straight into one buffer of its size: a test's 40 MB of
    tensors is copied once on its way in, where growing a buffer chunk by
    chunk and cutting the frame out of it copied it three times.
    """

    CHUNK = 1 << 16

    def __init__(self, sock: socket.socket, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.sock = sock
        self.limit = limit
        self.buffer = bytearray()
        # A large frame's body while it is read in place, and how much of it has arrived.
        self._body: bytearray | None = None
        self._filled = 0

    def _wanted(self) -> int:
        """Bytes still missing from the frame being read (0: a whole frame is here)."""
        if self._body is not None:
            return len(self._body) - self._filled
        if len(self.buffer) < _HEADER.size:
            return _HEADER.size - len(self.buffer)
        size: int
        (size,) = _HEADER.unpack_from(self.buffer)
        _check_size(size, self.limit)
        return max(0, _HEADER.size + size - len(self.buffer))

    def next_frame(self) -> bytes | bytearray | None:
        """The body of the next whole frame already read, or None."""
        if self._wanted():
            return None
        if self._body is not None:
            body, self._body = self._body, None
            return body
        (size,) = _HEADER.unpack_from(self.buffer)
        end = _HEADER.size + size
        frame = bytes(self.buffer[_HEADER.size : end])
        del self.buffer[:end]
        return frame

    def fill(self) -> None:
        """One ``recv`` (it blocks, or raises BlockingIOError, as the socket is set)."""
        if self._body is not None:
            with memoryview(self._body) as view:
                received = self.sock.recv_into(view[self._filled :])
            if not received:
                raise ChannelClosed("channel closed")
            self._filled += received
            return
        chunk = self.sock.recv(self.CHUNK)
        if not chunk:
            raise ChannelClosed("channel closed")
        self.buffer += chunk
        if self._wanted() > self.CHUNK:
            # Everything after the header belongs to this frame (more of it is missing).
            (size,) = _HEADER.unpack_from(self.buffer)
            self._body = bytearray(size)
            self._filled = len(self.buffer) - _HEADER.size
            self._body[: self._filled] = memoryview(self.buffer)[_HEADER.size :]
            self.buffer = bytearray()

    def message(self) -> dict[str, Any]:
        """The next message, reading until it is whole (a blocking socket)."""
        while (body := self.next_frame()) is None:
            self.fill()
        return parse_message(body)


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), 1 << 20))
        if not chunk:
            raise ChannelClosed("channel closed")
        chunks += chunk
    return bytes(chunks)


def recv_message(sock: socket.socket, limit: int = MAX_MESSAGE_BYTES) -> dict[str, Any]:
    """One frame, read exactly: nothing past it is taken off the socket.

    For channels read one message at a time with no reader kept between
    them (the control channels of the launcher and the fork server); a
    session's many calls go through a ``FrameReader``."""
    (size,) = _HEADER.unpack(_recv_exactly(sock, _HEADER.size))
    _check_size(size, limit)
    return parse_message(_recv_exactly(sock, size))


def _parse_int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS:
        raise ProtocolError(f"an integer of {len(text)} digits")
    return int(text)


def _check_depth(value: Any) -> None:
    # Iterative, so a deeply nested value cannot exhaust the stack here.
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ProtocolError(f"a value nested more than {MAX_DEPTH} levels deep")
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)


class _Blobs:
    """Hands each tensor or array of a frame its bytes from the region after the JSON.

    Used as the JSON decoder's ``object_hook``: objects close in document
    order, the order the encoder wrote their bytes in. Each reference must
    start where the last one ended, and together they must cover the region:
    no byte is read twice, none is left unread.
    """

    def __init__(self, region: memoryview) -> None:
        self.region = region
        self.cursor = 0

    def __call__(self, obj: dict[str, Any]) -> dict[str, Any]:
        if obj.get("__t") in ("tensor", "ndarray"):
            ref = obj.get("data")
            if isinstance(ref, dict) and list(ref) == ["__b"]:
                obj["data"] = self._take(ref["__b"])
        return obj

    def _take(self, ref: Any) -> memoryview:
        if not (isinstance(ref, list) and len(ref) == 2 and all(type(item) is int for item in ref)):
            raise ProtocolError("bad blob reference")
        offset, length = ref
        if offset != self.cursor or not 0 <= length <= len(self.region) - offset:
            raise ProtocolError("a blob reference out of order or past the frame's end")
        self.cursor += length
        return self.region[offset : offset + length]

    def check_all_taken(self) -> None:
        if self.cursor != len(self.region):
            raise ProtocolError(f"{len(self.region) - self.cursor} bytes after the frame's JSON belong to no tensor")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999: a non-finite float travels tagged ({"__t": "float"}), never bare
        raise ProtocolError("a number too large for a float")
    return value


def _refuse_constant(name: str) -> Any:
    # NaN, Infinity, -Infinity: Python's json reads them, but our own encoder
    # never writes them (allow_nan=False), and the replay's digest cannot hold
    # them: a forged reply carrying one crashed the harness (harness_crashed).
    raise ProtocolError(f"a bare {name} is not JSON")


def parse_message(raw: bytes | bytearray) -> dict[str, Any]:
    """Decode one frame's body; anything but a sane JSON object is a ProtocolError.

    The other side may be hostile: every failure of decoding (bad UTF-8,
    bad JSON, huge numbers, deep nesting, bad blob references, memory)
    becomes a ProtocolError, which the harness reports as the learner's
    error. A tensor's or an array's ``data`` is a read-only memoryview of
    its bytes in ``raw``; nothing else in the message is anything but JSON.
    """
    blobs = None
    end = raw.find(BLOB_SEPARATOR)
    if end >= 0:
        blobs = _Blobs(memoryview(raw)[end + len(BLOB_SEPARATOR) :])
        raw = raw[:end]
    try:
        message = json.loads(raw, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_refuse_constant, object_hook=blobs)
    except ProtocolError:
        raise
    except (ValueError, RecursionError, MemoryError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ProtocolError(f"malformed message: {type(exc).__name__}") from exc
    if not isinstance(message, dict):
        raise ProtocolError("a message is a JSON object")
    if blobs is not None:
        blobs.check_all_taken()
    _check_depth(message)
    return message


# --- values ------------------------------------------------------------------

_SPECIAL_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def encode_value(value: Any, on_object: Callable[[Any], dict[str, Any]]) -> Any:
    """Encode ``value`` as JSON-able plain data.

    ``on_object`` handles anything that is not plain data (the learner side
    turns it into a handle; the harness side refuses it).
    """
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return float(value)
        return {"__t": "float", "v": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if isinstance(value, list):
        return [encode_value(item, on_object) for item in value]
    if isinstance(value, tuple):
        return {"__t": "tuple", "v": [encode_value(item, on_object) for item in value]}
    if isinstance(value, dict):
        return {"__t": "dict", "v": [[encode_value(k, on_object), encode_value(v, on_object)] for k, v in value.items()]}
    module = type(value).__module__
    if module.startswith("torch") or _is_tensor(value):
        tensor = _as_tensor(value)
        if tensor is not None:
            return _encode_tensor(tensor)
    if module.startswith("numpy"):
        import numpy

        if isinstance(value, numpy.ndarray):
            if value.dtype.hasobject:
                raise ProtocolError("numpy arrays of Python objects cannot be graded")
            # tobytes writes C order whatever the layout; ascontiguousarray would turn a 0-d array into shape (1,).
            return {"__t": "ndarray", "dtype": value.dtype.str, "shape": list(value.shape), "data": Blob(value.tobytes(order="C"))}
        if isinstance(value, numpy.generic):
            return encode_value(value.item(), on_object)
    return on_object(value)


def matches_encoding(value: Any, data: Any, handle: Callable[[Any], Any]) -> bool:
    """Whether ``value`` still holds what ``data`` (its encoding, as received) says.

    ``handle`` maps a ``ref`` tag's id to the object it names. Cheaper than
    encoding ``value`` again: nothing is hashed or serialised, and a tensor
    is compared byte for byte with the frame it came in (wherever it was
    moved since: the device is not compared). A value whose shape of data
    differs in any way (another type, length, dtype, key order) does not match.
    """
    if data is None or isinstance(data, bool | int | float | str):
        return type(value) is type(data) and bool(value == data)
    if isinstance(data, list):
        return type(value) is list and len(value) == len(data) and all(matches_encoding(v, d, handle) for v, d in zip(value, data, strict=True))
    if not isinstance(data, dict):
        return False
    tag = data.get("__t")
    if tag == "float":
        special = _SPECIAL_FLOATS.get(data["v"], 0.0) if "v" in data else 0.0
        return type(value) is float and (value == special or (math.isnan(value) and math.isnan(special)))
    if tag == "tuple":
        items = data.get("v")
        return type(value) is tuple and isinstance(items, list) and len(value) == len(items) and all(
            matches_encoding(v, d, handle) for v, d in zip(value, items, strict=True)
        )
    if tag == "dict":
        pairs = data.get("v")
        if type(value) is not dict or not isinstance(pairs, list) or len(value) != len(pairs):
            return False
        return all(
            isinstance(pair, list) and len(pair) == 2 and matches_encoding(key, pair[0], handle) and matches_encoding(item, pair[1], handle)
            for (key, item), pair in zip(value.items(), pairs, strict=True)
        )
    if tag == "tensor":
        tensor = _as_tensor(value) if _is_tensor(value) else None
        if tensor is None:
            return False
        encoded = _encode_tensor(tensor)
        return (
            encoded["dtype"] == data.get("dtype")
            and encoded["shape"] == data.get("shape")
            and encoded["requires_grad"] == bool(data.get("requires_grad"))
            and bytes(encoded["data"].data) == bytes(data.get("data") or b"")
        )
    if tag == "ndarray":
        numpy = sys.modules.get("numpy")
        if numpy is None or not isinstance(value, numpy.ndarray):
            return False
        return bool(value.dtype.str == data.get("dtype") and list(value.shape) == data.get("shape") and value.tobytes(order="C") == bytes(data.get("data") or b""))
    if tag == "ref":
        return handle(data.get("id")) is value
    return False


def _is_tensor(value: Any) -> bool:
    # No tensor exists before torch is imported: never import it here. The
    # re-run's lean learner process (``lean``) would otherwise pay a whole
    # torch import (about a second) for the first object it hands back.
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _as_tensor(value: Any) -> Any:
    import torch

    if not isinstance(value, torch.Tensor):
        return None
    # Strip any subclass: only the raw data travels.
    return torch.Tensor.detach(value).as_subclass(torch.Tensor)


def _encode_tensor(tensor: Any) -> dict[str, Any]:
    import torch

    if tensor.layout != torch.strided or tensor.is_quantized:
        raise ProtocolError("only dense tensors can be graded")
    device = tensor.device.type
    flat = tensor.to("cpu").contiguous().reshape(-1)
    # A view of the tensor's own memory: its bytes are copied once, into the frame.
    raw = memoryview(flat.view(torch.uint8).numpy()) if flat.numel() else b""
    return {
        "__t": "tensor",
        "dtype": str(tensor.dtype).removeprefix("torch."),
        "shape": list(tensor.shape),
        "device": device,
        "requires_grad": bool(tensor.requires_grad),
        "data": Blob(raw),
    }


def decode_value(data: Any, on_tag: Callable[[dict[str, Any]], Any], *, to_device: bool = False) -> Any:
    """Decode plain data; ``on_tag`` handles tags other than the value tags.

    Malformed data raises ProtocolError, whatever is wrong with it.
    ``to_device`` (the learner side, decoding the tests' arguments): a tensor
    the tests made on the GPU arrives on this process's GPU, when it has one.
    The harness never sets it: what the learner returns is decoded on the CPU.
    """
    try:
        return _decode(data, on_tag, to_device)
    except ProtocolError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError, RecursionError, MemoryError, RuntimeError) as exc:
        raise ProtocolError(f"malformed value: {type(exc).__name__}") from exc


def _decode(data: Any, on_tag: Callable[[dict[str, Any]], Any], to_device: bool = False) -> Any:
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        return [_decode(item, on_tag, to_device) for item in data]
    if not isinstance(data, dict):
        raise ProtocolError(f"unexpected JSON value of type {type(data).__name__}")
    tag = data.get("__t")
    if tag == "float":
        try:
            return _SPECIAL_FLOATS[data["v"]]
        except KeyError as exc:
            raise ProtocolError("bad float") from exc
    if tag == "tuple":
        return tuple(_decode(item, on_tag, to_device) for item in _list(data.get("v")))
    if tag == "dict":
        result: dict[Any, Any] = {}
        for pair in _list(data.get("v")):
            if not isinstance(pair, list) or len(pair) != 2:
                raise ProtocolError("bad dict item")
            key = _decode(pair[0], on_tag, to_device)
            try:
                result[key] = _decode(pair[1], on_tag, to_device)
            except TypeError as exc:
                raise ProtocolError(f"unhashable dict key of type {type(key).__name__}") from exc
        return result
    if tag == "tensor":
        return _decode_tensor(data, to_device)
    if tag == "ndarray":
        return _decode_ndarray(data)
    return on_tag(data)


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ProtocolError("expected a list")
    return value


def _shape(value: Any) -> list[int]:
    shape = _list(value)
    if len(shape) > 16:
        raise ProtocolError("too many dimensions")
    if not all(isinstance(dim, int) and not isinstance(dim, bool) and dim >= 0 for dim in shape):
        raise ProtocolError("bad shape")
    return shape


def _blob(data: dict[str, Any]) -> memoryview:
    raw = data.get("data")
    if not isinstance(raw, memoryview):
        raise ProtocolError("tensor and array data must come as the frame's raw bytes")
    return raw


def _decode_tensor(data: dict[str, Any], to_device: bool = False) -> Any:
    import torch

    dtype = getattr(torch, str(data.get("dtype")), None)
    if not isinstance(dtype, torch.dtype):
        raise ProtocolError(f"unknown tensor dtype {data.get('dtype')!r}")
    shape = _shape(data.get("shape"))
    numel = math.prod(shape)
    itemsize = torch.empty((), dtype=dtype).element_size()
    if numel * itemsize > MAX_REQUEST_BYTES:
        raise ProtocolError("tensor too large")
    raw = _blob(data)
    if len(raw) != numel * itemsize:
        raise ProtocolError("tensor data does not match its shape and dtype")
    if numel == 0:
        tensor = torch.empty(shape, dtype=dtype)
    else:
        tensor = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype).reshape(shape).clone()
    if to_device and data.get("device") == "cuda" and torch.cuda.is_available():
        tensor = tensor.to("cuda")
    if data.get("requires_grad") and tensor.is_floating_point():
        tensor.requires_grad_(True)
    return tensor


def _decode_ndarray(data: dict[str, Any]) -> Any:
    import numpy

    try:
        dtype = numpy.dtype(str(data.get("dtype")))
    except TypeError as exc:
        raise ProtocolError("unknown array dtype") from exc
    if dtype.hasobject:
        raise ProtocolError("object arrays cannot be graded")
    shape = _shape(data.get("shape"))
    if math.prod(shape) * max(1, dtype.itemsize) > MAX_REQUEST_BYTES:
        raise ProtocolError("array too large")
    raw = _blob(data)
    if len(raw) != math.prod(shape) * dtype.itemsize:
        raise ProtocolError("array data does not match its shape and dtype")
    return numpy.frombuffer(raw, dtype=dtype).reshape(shape).copy()
