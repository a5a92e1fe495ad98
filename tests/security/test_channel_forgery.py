"""Attacks on the channel between the harness and the learner's processes.

The learner's code can write any bytes on its own end of its session, and
can replace, in its own process, the function that writes replies. None of
that may forge the fork server's word ("child_exit"), crash the harness
(which would be retried as our fault), or pass: it is the learner's error.
"""

from __future__ import annotations

import textwrap

import pytest

from .support import REFERENCE, Sandbox

pytestmark = [pytest.mark.docker, pytest.mark.security]

# Replaces, in the learner's own process, the function that sends replies,
# so every reply is the frame below: the most direct control of the channel.
REPLY_WITH = """
import struct, sys

def _hostile_send(sock, message):
    body = {frame}
    header = {header}
    sock.sendall((struct.pack("!I", len(body)) if header is None else header) + body)

sys.modules["dojo_harness.learner"].send_message = _hostile_send
"""

# name: (a Python expression for the frame's body, one for its header or None)
HOSTILE_FRAMES = {
    "deep-nesting": ('b"[" * 300_000 + b"]" * 300_000', "None"),
    "huge-int": ("b'{\"id\": 1, \"ok\": true, \"value\": ' + b'9' * 200_000 + b'}'", "None"),
    "huge-frame": ('b""', '(2**31).to_bytes(4, "big")'),
    "not-utf8": ("b'{\"id\": 1, \"ok\": true, \"value\": \"' + bytes([255, 254]) + b'\"}'", "None"),
    "not-an-object": ('b"[1, 2, 3]"', "None"),
    "forged-child-exit": ("b'{\"op\": \"child_exit\", \"exitcode\": 0}'", "None"),
    "exit-code-out-of-range": ("b'{\"op\": \"child_exit\", \"exitcode\": 100000000000}'", "None"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_FRAMES))
def test_a_hostile_reply_is_the_learners_error_never_ours(sandbox: Sandbox, name: str) -> None:
    frame, header = HOSTILE_FRAMES[name]
    graded = sandbox.attack(REFERENCE + textwrap.dedent(REPLY_WITH.format(frame=frame, header=header)), mode="submit")
    assert graded.outcome == "error", graded.describe()
    assert graded.result.error_code == "", graded.describe()
    assert graded.result.failure is not None and graded.result.failure.code == "channel_broken", graded.describe()
    assert not any(test.outcome == "passed" for test in graded.result.tests), graded.describe()


def test_a_child_cannot_reach_the_control_channel_or_forge_its_end(sandbox: Sandbox) -> None:
    # Run mode shows the learner's output: the probe prints what it could reach.
    probe = REFERENCE + textwrap.dedent(
        """
        import os, socket, struct

        _exact = kv_cache_bytes
        _done = []

        def kv_cache_bytes(*args, **kwargs):
            if not _done:
                _done.append(1)
                sockets = []
                for name in os.listdir("/proc/self/fd"):
                    try:
                        if os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                            sockets.append(name)
                    except OSError:
                        pass  # the descriptor listdir itself used
                parent = []
                for name in os.listdir(f"/proc/{os.getppid()}/fd") if os.access(f"/proc/{os.getppid()}/fd", os.R_OK) else []:
                    try:
                        # A socket there would be the control channel (/dev/null and
                        # the learner's own output pipes are harmless).
                        if not os.readlink(f"/proc/{os.getppid()}/fd/{name}").startswith("socket:"):
                            continue
                        fd = os.open(f"/proc/{os.getppid()}/fd/{name}", os.O_WRONLY)
                        parent.append(name)
                        os.close(fd)
                    except OSError:
                        pass
                print(f"SOCKETS {len(sockets)} PARENT_FDS_OPENED {parent}", flush=True)
            return _exact(*args, **kwargs)
        """
    )
    graded = sandbox.grade(probe)
    assert graded.outcome == "passed", graded.describe()
    assert "SOCKETS 1 PARENT_FDS_OPENED []" in graded.result.stdout, graded.describe()

    # Then a child writes a forged end of session on every socket it has.
    forged = REFERENCE + textwrap.dedent(
        """
        import json, os, struct

        _exact = kv_cache_bytes

        def kv_cache_bytes(*args, **kwargs):
            frame = json.dumps({"op": "child_exit", "exitcode": 0}).encode()
            for name in os.listdir("/proc/self/fd"):
                try:
                    if os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                        os.write(int(name), struct.pack("!I", len(frame)) + frame)
                except OSError:
                    pass
            return _exact(*args, **kwargs)
        """
    )
    graded = sandbox.attack(forged, mode="submit")
    assert graded.outcome == "error", graded.describe()
    assert graded.result.failure is not None and graded.result.failure.code == "channel_broken", graded.describe()
    assert "child_exit" in graded.result.failure.detail, graded.describe()


def test_an_import_error_is_known_to_have_seen_no_hidden_input(sandbox: Sandbox) -> None:
    graded = sandbox.grade("raise ValueError('broken at import')\n", mode="submit")
    assert graded.outcome == "error", graded.describe()
    assert graded.result.hidden_calls_made is False
    graded = sandbox.grade(REFERENCE.replace("def kv_cache_bytes(", "def _unused(") + "\ndef kv_cache_bytes(*a, **k):\n    raise ValueError(repr(a))\n", mode="submit")
    assert graded.result.hidden_calls_made is True


# The first reply each learner process sends carries a bare NaN. json reads
# NaN, but the re-run's replay digests replies with allow_nan=False: the
# ValueError escaped the replay and the harness reported harness_crashed,
# our fault, retried and alerted, for any failing Submit (red-team, 2026-12-04).
NAN_IN_FIRST_REPLY = """
import json, sys

def kv_cache_bytes(*args, **kwargs):
    return 0

max_sequences = kv_cache_bytes

_learner = sys.modules["dojo_harness.learner"]
_send, _sent = _learner.send_message, [0]

def _send_nan_once(sock, message, *args, **kwargs):
    if "id" in message and "ended" not in message:
        _sent[0] += 1
        if _sent[0] == 1:
            body = json.dumps({"id": message["id"], "ok": True, "value": {"__t": "handle", "id": 1, "type": "x"}, "pad": float("nan")}).encode()
            sock.sendall(len(body).to_bytes(4, "big") + body)
            return
    return _send(sock, message, *args, **kwargs)

_learner.send_message = _send_nan_once
"""


def test_a_bare_nan_in_a_reply_is_the_learners_error_never_ours(sandbox: Sandbox) -> None:
    graded = sandbox.attack(NAN_IN_FIRST_REPLY, mode="submit")
    assert graded.outcome in ("error", "failed"), graded.describe()
    assert graded.result.error_code == "", graded.describe()
    assert not any(test.outcome == "passed" for test in graded.result.tests), graded.describe()


# StopIteration raised by learner code ends the test's loop silently when it
# comes back as itself: every element after the first would go unchecked.
STOPS_THE_LOOP = "def double(x):\n    if x > 1:\n        raise StopIteration\n    return 2 * x\n"
LOOP_TESTS = {
    "test_visible.py": (
        "def test_every_value_doubles(solution):\n"
        "    for got, want in zip(map(solution.double, [1, 2, 3]), [2, 4, 6]):\n"
        "        assert got == want\n"
    )
}


def test_a_stop_iteration_from_the_learner_cannot_end_a_tests_loop(sandbox: Sandbox) -> None:
    graded = sandbox.grade(STOPS_THE_LOOP, tests=LOOP_TESTS)
    assert graded.outcome == "failed", graded.describe()
    failure = graded.result.tests[0].failure
    assert failure is not None and failure.code == "raised" and "StopIteration" in failure.traceback, graded.describe()
    honest = sandbox.grade("def double(x):\n    return 2 * x\n", tests=LOOP_TESTS)
    assert honest.outcome == "passed", honest.describe()
