"""The tapes a Submit's re-run replays, without Docker (``dojo_harness.tape``).

A replay may stand for a test only if equal digests mean equal replies up to
the learner's own numbering of handles, and if the tape holds every request a
fresh process would be sent. These tests pin both down: any other change to
a reply changes its digest; a handle renumbered consistently does not; a
tape that cannot vouch for its test is never handed out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sandbox" / "harness"))

from dojo_harness.protocol import Blob, encode_frame, parse_message  # type: ignore[import-not-found]
from dojo_harness.tape import Recorder, renumber, reply_digest  # type: ignore[import-not-found]


def _body(message: dict[str, Any]) -> bytes:
    return bytes(encode_frame(message)[4:])


def _digest(message: dict[str, Any], ordinals: dict[int, int] | None = None) -> bytes:
    body = _body(message)
    return bytes(reply_digest(body, parse_message(body), {} if ordinals is None else ordinals))


def _handle(handle_id: Any, type_name: str = "Box") -> dict[str, Any]:
    return {"__t": "handle", "id": handle_id, "type": type_name}


plain = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**9), 10**9) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(value=plain, call_id=st.integers(1, 10**6))
def test_a_reply_without_handles_is_compared_byte_for_byte(value: Any, call_id: int) -> None:
    reply = {"id": call_id, "ok": True, "value": value}
    assert _digest(reply) == _digest(json.loads(json.dumps(reply)))
    changed = {"id": call_id, "ok": True, "value": [value]}
    assert _digest(reply) != _digest(changed)
    assert _digest(reply) != _digest({"id": call_id + 1, "ok": True, "value": value})


def test_tensor_bytes_are_part_of_the_digest() -> None:
    def reply(data: bytes) -> dict[str, Any]:
        return {"id": 3, "ok": True, "value": {"__t": "tensor", "dtype": "uint8", "shape": [4], "device": "cpu", "requires_grad": False, "data": Blob(data)}}

    assert _digest(reply(b"\x00\x01\x02\x03")) == _digest(reply(b"\x00\x01\x02\x03"))
    assert _digest(reply(b"\x00\x01\x02\x03")) != _digest(reply(b"\x00\x01\x02\x04"))
    # With a handle in the same reply (the digest then walks the message), the bytes still count.
    with_handle = [{"id": 3, "ok": True, "value": [_handle(7), reply(data)["value"]]} for data in (b"\x00\x00\x00\x00", b"\x00\x00\x00\x01")]
    assert _digest(with_handle[0]) != _digest(with_handle[1])


@settings(max_examples=150, deadline=None)
@given(ids=st.lists(st.integers(1, 10**6), min_size=1, max_size=6, unique=True), offset=st.integers(1, 1000), value=plain)
def test_handles_renumbered_in_order_of_appearance_digest_alike(ids: list[int], offset: int, value: Any) -> None:
    first: dict[int, int] = {}
    second: dict[int, int] = {}
    reply = {"id": 9, "ok": True, "value": [value, *(_handle(i) for i in ids)]}
    shifted = {"id": 9, "ok": True, "value": [value, *(_handle(i + offset) for i in ids)]}
    assert _digest(reply, first) == _digest(shifted, second)
    # The orders map each process's ids to the same positions: the replay renumbers requests with them.
    assert {ordinal: i for i, ordinal in first.items()} == {ordinal: i - offset for i, ordinal in second.items()}


def test_a_handle_of_another_type_or_position_digests_differently() -> None:
    assert _digest({"id": 1, "ok": True, "value": _handle(4)}) != _digest({"id": 1, "ok": True, "value": _handle(4, "Other")})
    # The same handle twice is not two handles.
    assert _digest({"id": 1, "ok": True, "value": [_handle(4), _handle(4)]}) != _digest({"id": 1, "ok": True, "value": [_handle(4), _handle(5)]})
    # A handle whose id is not an integer is not renumbered: true is not 1.
    assert _digest({"id": 1, "ok": True, "value": _handle(True)}) != _digest({"id": 1, "ok": True, "value": _handle(1)})


def test_an_object_a_list_of_its_pairs_and_a_tensor_marker_digest_differently() -> None:
    # Learner code writes its own replies: in the re-run it once sent a handle as the
    # list of its key-value pairs, which digested like the first run's handle, and
    # the next call naming that object crashed the replay.
    handle = _handle(4)
    as_pairs = [[key, value] for key, value in handle.items()]
    assert _digest({"id": 1, "ok": True, "value": handle}) != _digest({"id": 1, "ok": True, "value": as_pairs}, {})
    # Each reply names a handle, so both are digested in their canonical form.
    def tensor(data: Any) -> dict[str, Any]:
        return {"__t": "tensor", "dtype": "uint8", "shape": [2], "device": "cpu", "requires_grad": False, "data": data}

    with_blob = {"id": 1, "ok": True, "value": [_handle(1), tensor(Blob(b"\x00\x00"))]}
    with_marker = {"id": 1, "ok": True, "value": [_handle(1), tensor(["__blob", 2])]}
    assert _digest(with_blob) != _digest(with_marker)
    assert _digest({"id": 1, "ok": True, "value": [_handle(1), {"a": 1}]}) != _digest({"id": 1, "ok": True, "value": [_handle(1), [["a", 1]]]})


def test_ordinals_carry_over_between_the_replies_of_one_test() -> None:
    shared: dict[int, int] = {}
    fresh: dict[int, int] = {}
    assert _digest({"id": 1, "ok": True, "value": _handle(40)}, shared) == _digest({"id": 1, "ok": True, "value": _handle(1)}, fresh)
    # A later reply naming the earlier object, in each numbering, digests alike ...
    assert _digest({"id": 2, "ok": True, "value": [_handle(41), _handle(40)]}, shared) == _digest({"id": 2, "ok": True, "value": [_handle(2), _handle(1)]}, fresh)
    # ... and one naming it where the other names a new object does not.
    assert _digest({"id": 3, "ok": True, "value": _handle(40)}, dict(shared)) != _digest({"id": 3, "ok": True, "value": _handle(3)}, dict(fresh))


def _request(call_id: int, target: int | None, args: list[Any], blob: bytes = b"") -> bytes:
    encoded_args = [*args, Blob(blob)] if blob else args
    return bytes(encode_frame({"op": "call", "id": call_id, "target": target, "attr": "f", "args": encoded_args, "kwargs": {"__t": "dict", "v": [["box", {"__t": "ref", "id": 40}]]}}))


def test_renumber_rewrites_the_target_and_every_reference_and_keeps_the_bytes() -> None:
    frame = _request(5, 40, [{"__t": "ref", "id": 41}, [{"__t": "ref", "id": 40}], 40], blob=b"\x01\x02\x03")
    out = renumber(frame, {40: 1, 41: 2})
    assert int.from_bytes(out[:4], "big") == len(out) - 4
    message = json.loads(out[4 : out.index(b"\x00", 4)])
    assert message["id"] == 5 and message["target"] == 1
    # The plain number 40 is data, not a handle: it stays.
    assert message["args"][:3] == [{"__t": "ref", "id": 2}, [{"__t": "ref", "id": 1}], 40]
    assert message["kwargs"] == {"__t": "dict", "v": [["box", {"__t": "ref", "id": 1}]]}
    assert out.endswith(b"\x00\x01\x02\x03")


def _reply(call_id: int, value: Any) -> tuple[bytes, dict[str, Any]]:
    body = _body({"id": call_id, "ok": True, "value": value})
    return body, parse_message(body)


def test_a_tape_holds_the_calls_of_its_test_only() -> None:
    recorder = Recorder()
    recorder.start("test_a", b"load")
    recorder.note(b"frame-1", 1, [], *_reply(1, _handle(7)))
    recorder.note(b"frame-2", 2, [7], *_reply(2, 3))
    recorder.stop()
    recorder.start("test_b", b"load")
    recorder.note(b"frame-3", 3, [], *_reply(3, 4))
    recorder.stop()
    tape_a, tape_b = recorder.tape("test_a"), recorder.tape("test_b")
    assert tape_a is not None and [call.call_id for call in tape_a.calls] == [1, 2] and tape_a.calls[1].refs == (7,)
    assert tape_a.ordinals == {7: 1}
    assert tape_b is not None and [call.call_id for call in tape_b.calls] == [3]
    assert recorder.tape("test_c") is None and recorder.untouched("test_c") and not recorder.untouched("test_a")


def test_an_object_kept_from_another_test_makes_the_tape_unusable() -> None:
    recorder = Recorder()
    recorder.start("test_a", b"load")
    recorder.note(b"f", 1, [], *_reply(1, _handle(7)))
    recorder.stop()
    recorder.start("test_b", b"load")
    recorder.note(b"f", 2, [7], *_reply(2, 1))  # handle 7 came to test_a
    recorder.stop()
    assert recorder.tape("test_a") is not None
    assert recorder.tape("test_b") is None and not recorder.untouched("test_b")


def test_a_reference_that_is_not_an_integer_makes_the_tape_unusable() -> None:
    recorder = Recorder()
    recorder.start("test_a", b"load")
    recorder.note(b"f", 1, [], *_reply(1, _handle(1)))
    recorder.note(b"f", 2, [True], *_reply(2, 1))  # True == 1, but the learner was sent `true`
    recorder.stop()
    assert recorder.tape("test_a") is None


def test_a_call_outside_any_test_leaves_nothing_to_replay() -> None:
    recorder = Recorder()
    recorder.start("test_a", b"load")
    recorder.note(b"f", 1, [], *_reply(1, 2))
    recorder.stop()
    recorder.note(b"f", 2, [], *_reply(2, 2))  # e.g. an object kept in a global, called at teardown
    assert recorder.tape("test_a") is None
    assert not recorder.untouched("test_other")


def test_the_budget_and_a_repeated_name_make_tapes_unusable() -> None:
    recorder = Recorder(budget=10)
    recorder.start("test_small", b"load")
    recorder.note(b"12345", 1, [], *_reply(1, 1))
    recorder.stop()
    recorder.start("test_big", b"load")
    recorder.note(b"123456", 2, [], *_reply(2, 1))
    recorder.stop()
    assert recorder.tape("test_small") is not None
    assert recorder.tape("test_big") is None
    assert recorder.spent == 5
    recorder.start("test_small", b"load")
    recorder.stop()
    assert recorder.tape("test_small") is None


def test_request_ids_say_nothing_of_how_many_calls_came_before() -> None:
    # Learner code can read the id of the request it answers (its caller's
    # frame): a counter would tell a re-run's fresh process whether earlier
    # tests ran. Ids are random, and unique within a channel.
    import socket

    from dojo_harness.proxy import Channel  # type: ignore[import-not-found]

    first_ids = []
    for _ in range(20):
        left, right = socket.socketpair()
        with left, right:
            channel = Channel(left, deadline=0)
            ids = [channel.next_id() for _ in range(500)]
        assert len(set(ids)) == len(ids)
        assert ids != sorted(ids)
        first_ids.append(ids[0])
    assert len(set(first_ids)) == len(first_ids) and min(first_ids) > 1000
