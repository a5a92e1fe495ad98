"""The harness's decoding of what the learner's process sends, without Docker.

The learner's code can write anything on its own end of the channel. Every
such frame must end as a ProtocolError (reported as the learner's error) or
a plain value: never another exception, which would crash the harness and
look like the grader's fault.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sandbox" / "harness"))

from dojo_harness.protocol import (  # type: ignore[import-not-found]
    MAX_MESSAGE_BYTES,
    ChannelClosed,
    ProtocolError,
    decode_value,
    encode_value,
    parse_message,
    recv_message,
)

json_leaves = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
tags = st.sampled_from(["float", "tuple", "dict", "tensor", "ndarray", "handle", "ref", "other"])
tagged = st.fixed_dictionaries(
    {"__t": tags},
    optional={
        "v": json_leaves | st.lists(json_leaves, max_size=3) | st.lists(st.lists(json_leaves, max_size=3), max_size=3),
        "dtype": st.sampled_from(["float32", "int8", "bool", "float16", "<f4", "|O", "complex64", "nope", "Tensor"]) | json_leaves,
        "shape": st.lists(st.integers(min_value=-2, max_value=10**13), max_size=4) | json_leaves,
        "data": st.text(max_size=12) | json_leaves,
        "requires_grad": json_leaves,
        "id": json_leaves,
    },
)
values = st.recursive(json_leaves | tagged, lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4), max_leaves=25)


def _refuse_tags(tag: dict[str, Any]) -> Any:
    raise ProtocolError("unexpected tag")


@settings(max_examples=400, deadline=None)
@given(values)
def test_decoding_any_value_gives_a_value_or_a_protocol_error(data: Any) -> None:
    try:
        decode_value(data, _refuse_tags)
    except ProtocolError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_parsing_any_bytes_gives_a_message_or_a_protocol_error(raw: bytes) -> None:
    try:
        assert isinstance(parse_message(raw), dict)
    except ProtocolError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.recursive(json_leaves.filter(lambda v: not isinstance(v, float) or v == v), lambda c: st.lists(c, max_size=3) | st.tuples(c, c), max_leaves=10))
def test_plain_data_survives_the_trip(value: Any) -> None:
    def refuse(obj: Any) -> dict[str, Any]:
        raise AssertionError(f"not plain data: {obj!r}")

    encoded = json.loads(json.dumps(encode_value(value, refuse)))
    assert decode_value(encoded, _refuse_tags) == value


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 200_000 + b"]" * 200_000,  # nesting that would exhaust the stack
        b'{"id": 1, "value": ' + b"7" * 100_000 + b"}",  # a number Python refuses to parse
        b'{"v": ' + b'{"a": ' * 100 + b"1" + b"}" * 100 + b"}",  # deeper than the harness accepts
        b"\xff\xfe\x00garbage",  # not UTF-8
        b"[1, 2, 3]",  # not an object
        b'{"id": 1, "ok": true, "value": {"__t": "tensor", "dtype": "float32", "shape": [1000000000000], "data": ""}}',
        # Bare non-finite numbers: our encoder tags them; the replay digest crashed on them (harness_crashed).
        b'{"id": 1, "ok": true, "value": NaN}',
        b'{"id": 1, "ok": true, "value": [Infinity]}',
        b'{"id": 1, "ok": true, "value": {"a": -Infinity}}',
        b'{"id": 1, "ok": true, "value": 1e999}',
    ],
    ids=["deep-nesting", "huge-int", "too-deep", "not-utf8", "not-an-object", "huge-tensor-shape", "nan", "infinity", "minus-infinity", "1e999"],
)
def test_hostile_frames_are_protocol_errors(body: bytes) -> None:
    harness, learner = socket.socketpair()
    # A frame larger than the socket buffer: send it while the harness reads.
    sender = threading.Thread(target=learner.sendall, args=(struct.pack("!I", len(body)) + body,), daemon=True)
    with harness, learner:
        sender.start()
        try:
            message = recv_message(harness)
        except ProtocolError:
            return
        finally:
            sender.join(10)
        # A frame that parses must still refuse to decode into a value.
        with pytest.raises(ProtocolError):
            decode_value(message["value"], _refuse_tags)


def test_an_oversized_header_is_refused_before_reading_the_body() -> None:
    harness, learner = socket.socketpair()
    with harness, learner:
        learner.sendall(struct.pack("!I", MAX_MESSAGE_BYTES + 1))
        with pytest.raises(ProtocolError, match="exceeds"):
            recv_message(harness)


def test_a_closed_channel_is_its_own_error() -> None:
    harness, learner = socket.socketpair()
    with harness:
        learner.sendall(struct.pack("!I", 10) + b"{")
        learner.close()
        with pytest.raises(ChannelClosed):
            recv_message(harness)
