"""How frames cross a session's socket, without Docker.

The harness's end of a session never blocks: it sends and reads without
setting a timeout first, and every wait is a select with the job's deadline
that an output flood ends at once. Frames are read through a buffer, so a
small message (almost every call's) costs one ``recv``, not one for its
length and one for its body: three system calls a call on the harness's
side where there were nine. Under gVisor each is a trip through its
user-space kernel: a call into the learner's code went from about 250 to
140 us there, and from about 40 to 33 us under runc (bench/experiments/round_trips.py).
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sandbox" / "harness"))

from dojo_harness.protocol import (  # type: ignore[import-not-found]
    MAX_MESSAGE_BYTES,
    ChannelClosed,
    FrameReader,
    ProtocolError,
    encode_frame,
)
from dojo_harness.proxy import Channel, ChannelBroken, JobTimeout, LearnerDied, OutputFlood  # type: ignore[import-not-found]

messages = st.lists(
    st.fixed_dictionaries({"id": st.integers(0, 10**6), "ok": st.booleans(), "value": st.text(max_size=300) | st.lists(st.integers(), max_size=50)}),
    min_size=1,
    max_size=6,
)


class CountingSocket:
    """A socket's ``recv`` over bytes given in chunks, counting the calls."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.calls = 0

    def recv(self, size: int) -> bytes:
        self.calls += 1
        if not self.chunks:
            return b""
        chunk = self.chunks.pop(0)
        if len(chunk) > size:
            chunk, rest = chunk[:size], chunk[size:]
            self.chunks.insert(0, rest)
        return chunk


def _read_all(reader: FrameReader, count: int) -> list[dict[str, Any]]:
    return [reader.message() for _ in range(count)]


def test_a_small_message_costs_one_recv() -> None:
    frame = encode_frame({"id": 1, "ok": True, "value": [1, 2, 3]})
    sock = CountingSocket([frame])
    assert FrameReader(sock).message() == {"id": 1, "ok": True, "value": [1, 2, 3]}
    assert sock.calls == 1


@settings(max_examples=150, deadline=None)
@given(messages, st.lists(st.integers(1, 200), min_size=1, max_size=40))
def test_frames_come_out_whole_and_in_order_however_the_bytes_arrive(sent: list[dict[str, Any]], cuts: list[int]) -> None:
    data = b"".join(encode_frame(message) for message in sent)
    chunks, start = [], 0
    for cut in cuts:
        if start >= len(data):
            break
        chunks.append(data[start : start + cut])
        start += cut
    if start < len(data):
        chunks.append(data[start:])
    reader = FrameReader(CountingSocket(chunks))
    assert _read_all(reader, len(sent)) == [json.loads(json.dumps(message)) for message in sent]
    with pytest.raises(ChannelClosed):
        reader.message()


def test_an_oversized_length_is_refused_before_any_body_is_read() -> None:
    sock = CountingSocket([struct.pack("!I", MAX_MESSAGE_BYTES + 1), b"x" * 100])
    with pytest.raises(ProtocolError, match="exceeds"):
        FrameReader(sock).message()
    assert sock.calls == 1


def test_a_frame_cut_short_by_a_closed_channel_is_its_own_error() -> None:
    sock = CountingSocket([struct.pack("!I", 10) + b"{"])
    with pytest.raises(ChannelClosed):
        FrameReader(sock).message()


def _session(deadline_s: float = 10.0, abort: threading.Event | None = None) -> tuple[Channel, socket.socket, socket.socket, socket.socket]:
    """A channel whose session socket is ``harness`` (non-blocking, as ``open_session`` leaves it)."""
    control, server_end = socket.socketpair()
    harness, learner = socket.socketpair()
    harness.setblocking(False)
    return Channel(control, deadline=time.monotonic() + deadline_s, abort=abort), harness, learner, server_end


def test_a_big_reply_sent_slowly_arrives_whole() -> None:
    channel, harness, learner, server_end = _session()
    value = "x" * (3 * 1024 * 1024)
    frame = encode_frame({"id": 7, "ok": True, "value": value}, MAX_MESSAGE_BYTES)

    def trickle() -> None:
        for start in range(0, len(frame), 700_000):
            learner.sendall(frame[start : start + 700_000])
            time.sleep(0.01)

    sender = threading.Thread(target=trickle, daemon=True)
    sender.start()
    with harness, learner, server_end, channel.control:
        assert channel.recv(FrameReader(harness)) == {"id": 7, "ok": True, "value": value}
        sender.join(10)


def test_a_big_request_waits_for_the_learner_to_read_it() -> None:
    channel, harness, learner, server_end = _session()
    request = {"op": "call", "id": 1, "args": ["y" * (4 * 1024 * 1024)]}
    got: list[dict[str, Any]] = []
    reader = threading.Thread(target=lambda: got.append(FrameReader(learner, 2**27).message()), daemon=True)
    reader.start()
    with harness, learner, server_end, channel.control:
        channel.send(harness, request)
        reader.join(10)
    assert got == [request]


def test_a_learner_that_never_reads_times_the_send_out() -> None:
    channel, harness, learner, server_end = _session(deadline_s=0.5)
    started = time.monotonic()
    with harness, learner, server_end, channel.control, pytest.raises(JobTimeout):
        channel.send(harness, {"op": "call", "id": 1, "args": ["z" * (8 * 1024 * 1024)]})
    assert time.monotonic() - started < 3


def test_an_output_flood_ends_a_blocked_send_at_once() -> None:
    flood = threading.Event()
    channel, harness, learner, server_end = _session(deadline_s=30, abort=flood)
    threading.Timer(0.2, flood.set).start()
    started = time.monotonic()
    with harness, learner, server_end, channel.control, pytest.raises(OutputFlood):
        channel.send(harness, {"op": "call", "id": 1, "args": ["z" * (8 * 1024 * 1024)]})
    assert time.monotonic() - started < 3


def test_a_learner_that_never_answers_times_the_read_out() -> None:
    channel, harness, learner, server_end = _session(deadline_s=0.3)
    with harness, learner, server_end, channel.control, pytest.raises(JobTimeout):
        channel.recv(FrameReader(harness))


def test_a_child_that_ends_mid_frame_is_reported_with_its_exit_code() -> None:
    channel, harness, learner, server_end = _session()
    with harness, server_end, channel.control:
        learner.sendall(struct.pack("!I", 100) + b'{"id": 1')
        learner.close()
        server_end.sendall(encode_frame({"op": "child_exit", "exitcode": 3}))
        with pytest.raises(LearnerDied) as died:
            channel.recv(FrameReader(harness))
    assert died.value.exitcode == 3


def test_junk_on_the_session_is_the_learners_error() -> None:
    channel, harness, learner, server_end = _session()
    with harness, learner, server_end, channel.control:
        learner.sendall(struct.pack("!I", 5) + b"nope!")
        with pytest.raises(ChannelBroken):
            channel.recv(FrameReader(harness))
