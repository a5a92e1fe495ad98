"""Tensors and arrays cross the channel as raw bytes after the frame's JSON, without Docker.

What the harness sends (a test's inputs) must arrive bit for bit, whatever
the dtype and shape. What the learner's process sends back is hostile: a
blob reference that points out of order, twice at the same bytes, past the
frame or leaves bytes unread is a ProtocolError, so no reply can make the
harness rebuild more bytes than the reply carried. A large frame is read
straight into a buffer of its size, never past its end.
"""

from __future__ import annotations

import json
import random
import socket
import struct
import sys
import threading
from pathlib import Path
from typing import Any

import numpy
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sandbox" / "harness"))

from dojo_harness.protocol import (  # type: ignore[import-not-found]
    BLOB_SEPARATOR,
    MAX_MESSAGE_BYTES,
    FrameReader,
    ProtocolError,
    decode_value,
    encode_frame,
    encode_value,
    parse_message,
)

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.int32, torch.int64, torch.bool, torch.complex64]


def _refuse(obj: Any) -> dict[str, Any]:
    raise AssertionError(f"not plain data: {obj!r}")


def _refuse_tags(tag: dict[str, Any]) -> Any:
    raise ProtocolError("unexpected tag")


def _trip(value: Any) -> Any:
    frame = encode_frame({"id": 1, "value": encode_value(value, _refuse)})
    (size,) = struct.unpack("!I", frame[:4])
    assert size == len(frame) - 4
    return decode_value(parse_message(frame[4:])["value"], _refuse_tags)


def _random_tensor(dtype: torch.dtype, shape: list[int], seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    raw = torch.randint(0, 256, (int(numpy.prod(shape)) * torch.empty((), dtype=dtype).element_size(),), generator=gen, dtype=torch.uint8)
    if dtype == torch.bool:
        raw &= 1  # a bool's only bit patterns
    # Any bit pattern, NaNs and infinities included: the bytes are what must survive.
    return raw.view(dtype).reshape(shape)


def _bytes(tensor: torch.Tensor) -> bytes:
    return tensor.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(DTYPES), st.lists(st.integers(0, 5), max_size=4), st.integers(0, 2**31)),
        min_size=1,
        max_size=5,
    ),
    st.booleans(),
)
def test_tensors_of_every_dtype_and_shape_arrive_bit_for_bit(specs: list[tuple[torch.dtype, list[int], int]], transposed: bool) -> None:
    tensors = [_random_tensor(dtype, shape, seed) for dtype, shape, seed in specs]
    if transposed:
        tensors = [t.T if t.dim() == 2 else t for t in tensors]  # not contiguous: sent as its values, in order
    value = {"first": tensors[0], "rest": tuple(tensors[1:]), "plain": [1, "two", None]}
    back = _trip(value)
    assert back["plain"] == [1, "two", None]
    for sent, got in zip(tensors, [back["first"], *back["rest"]], strict=True):
        assert type(got) is torch.Tensor and got.dtype == sent.dtype and got.shape == sent.shape
        assert got.is_contiguous()
        assert _bytes(got) == _bytes(sent)
        got.add_(1) if got.dtype != torch.bool else got.logical_not_()  # a fresh, writable tensor of its own


def test_numpy_arrays_and_scalars_arrive_as_they_left() -> None:
    arrays = [numpy.arange(12, dtype=numpy.float16).reshape(3, 4), numpy.array(True), numpy.zeros((0, 3), dtype=numpy.int64), numpy.asfortranarray(numpy.eye(3))]
    back = _trip(arrays)
    for sent, got in zip(arrays, back, strict=True):
        assert got.dtype == sent.dtype and got.shape == sent.shape and numpy.array_equal(got, sent)
        assert got.flags.writeable


def test_a_frame_without_tensors_is_plain_json() -> None:
    frame = encode_frame({"id": 3, "value": [1.5, "x"]})
    assert BLOB_SEPARATOR not in frame[4:]
    assert json.loads(frame[4:]) == {"id": 3, "value": [1.5, "x"]}


def _tensor_tag(offset: int, length: int) -> dict[str, Any]:
    return {"__t": "tensor", "dtype": "uint8", "shape": [length], "device": "cpu", "requires_grad": False, "data": {"__b": [offset, length]}}


def _body(value: Any, region: bytes) -> bytes:
    return json.dumps({"id": 1, "ok": True, "value": value}).encode() + bytes(BLOB_SEPARATOR) + region


@pytest.mark.parametrize(
    ("value", "region"),
    [
        # The same 1 MiB named a thousand times: a GiB to rebuild from a 1 MiB reply.
        ([_tensor_tag(0, 1 << 20) for _ in range(1000)], bytes(1 << 20)),
        ([_tensor_tag(4, 4), _tensor_tag(0, 4)], bytes(8)),  # out of order
        ([_tensor_tag(0, 4), _tensor_tag(2, 4)], bytes(8)),  # overlapping
        ([_tensor_tag(0, 16)], bytes(8)),  # past the end
        ([_tensor_tag(0, 4)], bytes(8)),  # bytes nobody owns
        ([_tensor_tag(-4, 4)], bytes(8)),
        ({"__t": "tensor", "dtype": "uint8", "shape": [1], "data": {"__b": [True, 1]}}, bytes(1)),
        ({"__t": "tensor", "dtype": "uint8", "shape": [1], "data": {"__b": [0]}}, bytes(1)),
        ({"__t": "tensor", "dtype": "uint8", "shape": [1], "data": {"__b": "0,1"}}, bytes(1)),
        ({"__t": "tensor", "dtype": "float32", "shape": [2], "data": {"__b": [0, 4]}}, bytes(4)),  # fewer bytes than the shape needs
        ({"__t": "ndarray", "dtype": "<f8", "shape": [3], "data": {"__b": [0, 8]}}, bytes(8)),
        ({"__t": "tensor", "dtype": "uint8", "shape": [4], "data": "AAAAAA=="}, b""),  # base64, as frames once carried it
        ({"__t": "tensor", "dtype": "uint8", "shape": [4], "data": {"__b": [0, 4], "x": 1}}, bytes(4)),
        ({"__t": "handle", "id": 1, "data": {"__b": [0, 4]}}, bytes(4)),  # only a tensor or an array owns bytes
    ],
    ids=[
        "amplification", "out-of-order", "overlapping", "past-the-end", "left-over", "negative", "bool-offset",
        "short-ref", "string-ref", "short-data", "short-array", "base64", "extra-key", "not-a-tensor",
    ],
)
def test_hostile_blob_references_are_protocol_errors(value: Any, region: bytes) -> None:
    body = _body(value, region)
    assert len(body) < MAX_MESSAGE_BYTES
    with pytest.raises(ProtocolError):
        decode_value(parse_message(body)["value"], _refuse_tags)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.binary(max_size=64))
def test_any_bytes_after_the_separator_give_a_message_or_a_protocol_error(head: bytes, region: bytes) -> None:
    for body in (head + BLOB_SEPARATOR + region, _body([_tensor_tag(0, len(region))], region) + head):
        try:
            message = parse_message(body)
            decode_value(message.get("value"), _refuse_tags)
        except ProtocolError:
            pass


def test_a_reply_that_names_its_bytes_in_order_decodes() -> None:
    region = bytes(range(10))
    back = decode_value(parse_message(_body([_tensor_tag(0, 4), _tensor_tag(4, 0), _tensor_tag(4, 6)], region))["value"], _refuse_tags)
    assert [t.tolist() for t in back] == [[0, 1, 2, 3], [], [4, 5, 6, 7, 8, 9]]


def test_the_blob_region_counts_against_the_frame_limit() -> None:
    with pytest.raises(ProtocolError, match="exceeds"):
        encode_frame({"value": encode_value(torch.zeros(1 << 20, dtype=torch.uint8), _refuse)}, limit=1 << 20)


def test_a_large_frame_is_read_in_place_and_the_frames_after_it_are_intact() -> None:
    big = torch.arange(3 * 2**20, dtype=torch.int32)  # 12 MiB: read straight into one buffer of its size
    frames = [
        encode_frame({"id": 1, "value": "before"}),
        encode_frame({"id": 2, "value": encode_value(big, _refuse)}),
        encode_frame({"id": 3, "value": "after"}),
    ]
    stream = b"".join(frames)
    cuts = sorted(random.Random(5).sample(range(1, len(stream)), 400))
    harness, learner = socket.socketpair()

    def send() -> None:
        # In pieces of every size, as a socket delivers them.
        for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
            learner.sendall(stream[start:end])

    sender = threading.Thread(target=send, daemon=True)
    with harness, learner:
        sender.start()
        reader = FrameReader(harness)
        first, second, third = (reader.message() for _ in range(3))
        sender.join(10)
    assert (first["value"], third["value"]) == ("before", "after")
    assert torch.equal(decode_value(second["value"], _refuse_tags), big)


def test_a_large_frame_over_the_limit_is_refused_before_its_body_is_read() -> None:
    frame = encode_frame({"value": encode_value(torch.zeros(2**20, dtype=torch.uint8), _refuse)})
    harness, learner = socket.socketpair()
    with harness, learner:
        learner.sendall(frame[:70_000])
        with pytest.raises(ProtocolError, match="exceeds"):
            FrameReader(harness, limit=2**19).message()
