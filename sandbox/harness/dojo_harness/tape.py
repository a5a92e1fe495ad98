"""Tapes of a Submit's first run, for its re-run to replay (``replay``).

During a Submit's first run, every test that uses ``solution`` gets a tape:
each request the harness sent the learner's process, exactly as it was
encoded, and a digest of the reply. The re-run then sends a fresh learner
process the same requests and compares the digests of its replies, instead
of running the test itself again. The argument why this decides the same
thing is in docs/security.md ("The re-run replays each test").

Handle ids (an object living in the learner's process) are numbered by the
learner's side, and a process that served other tests first numbers them
differently from a fresh one. So a reply that holds a handle is digested
with each handle id replaced by its order of first appearance in the test,
and a request that names handles is replayed with the fresh process's ids.
A request that names a handle no reply of its own test produced (an object
kept from another test) makes the tape unusable: the test runs again for
real. So does anything the taping cannot vouch for: a call made outside
any test, or a tape past its share of the memory budget. A test that made
no call at all (it never used ``solution``) needs no replay.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

# What the tapes of one run may hold, in bytes of request frames. A test
# past it runs again for real (the speculative-decoding rung sends up to
# 40 MiB a call).
TAPE_BUDGET_BYTES = 32 * 1024 * 1024
# Ends a frame's JSON when raw bytes follow it (``protocol.BLOB_SEPARATOR``).
_SEPARATOR = b"\x00"


def load_digest(body: bytes | bytearray) -> bytes:
    """The digest of a session's load reply (no handles, no call id)."""
    return b"raw:" + hashlib.blake2b(body, digest_size=20).digest()


def reply_digest(body: bytes | bytearray, message: dict[str, Any], ordinals: dict[int, int]) -> bytes:
    """A reply's digest, its handle ids replaced by ``ordinals`` (filled in as they first appear).

    A reply whose JSON names no handle is digested as it came, byte for
    byte (its call id is the same in the replay). Otherwise the digest is
    over the decoded message with every handle id renumbered, and the bytes
    of each tensor in order.
    """
    end = body.find(_SEPARATOR)
    if body.find(b"handle", 0, len(body) if end < 0 else end) < 0:
        return b"raw:" + hashlib.blake2b(body, digest_size=20).digest()
    hasher = hashlib.blake2b(digest_size=20)

    # Each kind of container gets its own one-key object, and the reply's own
    # values are never objects here: a list, an object and a tensor's bytes
    # cannot digest alike. (Objects written as lists of pairs once did: a
    # learner that sent a handle as [["__t", "handle"], ...] in the re-run
    # matched the first run's digest with no handle in it.)
    def canonical(value: Any) -> Any:
        if isinstance(value, list):
            return {"l": [canonical(item) for item in value]}
        if isinstance(value, memoryview):
            hasher.update(value)
            return {"b": value.nbytes}
        if not isinstance(value, dict):
            return value
        if value.get("__t") == "handle" and type(value.get("id")) is int:
            value = {**value, "id": ordinals.setdefault(value["id"], len(ordinals) + 1)}
        return {"d": [[key, canonical(item)] for key, item in value.items()]}

    text_form = json.dumps(canonical(message), separators=(",", ":"), allow_nan=False)
    hasher.update(text_form.encode("utf-8"))
    return b"canonical:" + hasher.digest()


@dataclass
class TapedCall:
    frame: bytes
    call_id: int
    # Handle ids the request names, in the first run's numbering (its target first).
    refs: tuple[int, ...]
    digest: bytes


@dataclass
class Tape:
    """One test's calls in the first run; ``usable`` False: it cannot be replayed."""

    load_digest: bytes
    calls: list[TapedCall] = field(default_factory=list)
    # The first run's handle ids of this test, each mapped to its order of first appearance.
    ordinals: dict[int, int] = field(default_factory=dict)
    usable: bool = True


class Recorder:
    """The tapes of one run, by test name, within one memory budget."""

    def __init__(self, budget: int = TAPE_BUDGET_BYTES) -> None:
        self.budget = budget
        self.spent = 0
        self.tapes: dict[str, Tape] = {}
        self.current: Tape | None = None
        # A call made while no test was taping: nothing of the run can be vouched for.
        self.stray = False

    def start(self, name: str, load_digest: bytes) -> None:
        tape = Tape(load_digest)
        if name in self.tapes:  # two tests of one name: neither can be told apart
            tape.usable = self.tapes[name].usable = False
        self.tapes[name] = self.current = tape

    def stop(self) -> None:
        self.current = None

    def note(self, frame: bytes, call_id: int, refs: list[int], body: bytes | bytearray, reply: dict[str, Any]) -> None:
        """One call of the running test: its request as sent and its reply as received."""
        tape = self.current
        if tape is None:
            self.stray = True
            return
        if not tape.usable:
            return
        if any(type(ref) is not int or ref not in tape.ordinals for ref in refs) or self.spent + len(frame) > self.budget:
            tape.usable = False
            tape.calls.clear()
            return
        self.spent += len(frame)
        tape.calls.append(TapedCall(frame, call_id, tuple(refs), reply_digest(body, reply, tape.ordinals)))

    def untouched(self, name: str) -> bool:
        """Test ``name`` made no call to the learner's process (it never used ``solution``).

        Its outcome cannot depend on what that process kept: it stands for
        the re-run as it is (a test that skips itself on a machine without a
        GPU, before asking for ``solution``).
        """
        return not self.stray and name not in self.tapes

    def tape(self, name: str) -> Tape | None:
        """The usable tape of test ``name``, or None (it runs again for real)."""
        tape = self.tapes.get(name)
        if self.stray or tape is None or not tape.usable:
            return None
        return tape


def renumber(frame: bytes, mapping: dict[int, int]) -> bytes:
    """The request ``frame`` with its handle ids (target and references) renumbered by ``mapping``.

    Only requests the harness encoded come here; the blobs after the JSON
    keep their bytes and order.
    """
    end = frame.find(_SEPARATOR, 4)
    text, rest = (frame[4:], b"") if end < 0 else (frame[4:end], frame[end:])
    message = json.loads(text)

    def walk(value: Any) -> Any:
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, dict):
            if value.get("__t") == "ref":
                return {**value, "id": mapping[value["id"]]}
            return {key: walk(item) for key, item in value.items()}
        return value

    if message.get("target") is not None:
        message["target"] = mapping[message["target"]]
    for key in ("args", "kwargs"):
        if key in message:
            message[key] = walk(message[key])
    data = json.dumps(message, allow_nan=False, separators=(",", ":")).encode("utf-8") + rest
    return len(data).to_bytes(4, "big") + data


__all__ = ["TAPE_BUDGET_BYTES", "Recorder", "Tape", "TapedCall", "load_digest", "renumber", "reply_digest"]
