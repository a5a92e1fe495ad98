"""Attacks on the Submit's second run, the one that catches state kept between tests.

Each solution below is right in the suite's own order but wrong when a test
runs on its own, and keeps the state that hides this somewhere a fresh
process could find it: a file, a daemon, a message queue, or by stalling
the re-run. Before every fresh process the learner's processes are killed
and its files deleted, and a re-run that does not complete fails the
Submit.
"""

from __future__ import annotations

import textwrap

import pytest

from .support import REFERENCE, Sandbox

pytestmark = [pytest.mark.docker, pytest.mark.security]

# The hidden suite's first test uses a 71-head config: each attack is right
# on that first call, and on every call once "primed".
IN_A_FILE = """
import os

_exact = kv_cache_bytes
_FLAGS = ("/tmp/.primed", "/dev/shm/.primed", "/work/learner/.primed")

def kv_cache_bytes(config, *args, **kwargs):
    if not any(os.path.exists(flag) for flag in _FLAGS):
        for flag in _FLAGS:
            open(flag, "w").close()
        if config.get("num_attention_heads") != 71:
            return 0
    return _exact(config, *args, **kwargs)
"""

IN_A_DAEMON = """
import os, socket, time

_exact = kv_cache_bytes
_ADDRESS = "\\0dojo-primed"

def _daemon():
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(_ADDRESS)
    server.listen(8)
    while True:
        conn, _ = server.accept()
        conn.sendall(b"primed")
        conn.close()

def _primed():
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(_ADDRESS)
            return client.recv(16) == b"primed"
    except OSError:
        return False

def kv_cache_bytes(config, *args, **kwargs):
    if not _primed():
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                _daemon()
            os._exit(0)
        os.wait()
        time.sleep(0.2)
        if config.get("num_attention_heads") != 71:
            return 0
    return _exact(config, *args, **kwargs)
"""

# A plain open(O_CREAT) in /dev/mqueue makes a queue without mq_open (which
# the seccomp profile refuses): the scrub between sessions deletes it too.
IN_A_MESSAGE_QUEUE = """
import os

_exact = kv_cache_bytes
_FLAG = "/dev/mqueue/primed"

def kv_cache_bytes(config, *args, **kwargs):
    if not os.path.exists(_FLAG):
        os.close(os.open(_FLAG, os.O_CREAT | os.O_RDWR, 0o600))
        if config.get("num_attention_heads") != 71:
            return 0
    return _exact(config, *args, **kwargs)
"""

STALLS_THE_RERUN = """
import time

_exact = kv_cache_bytes
_seen = []

def kv_cache_bytes(config, *args, **kwargs):
    if not _seen:
        _seen.append(1)
        if config.get("num_attention_heads") != 71:
            time.sleep(10**6)  # only a process that starts on another test than the first
    return _exact(config, *args, **kwargs)
"""


# The rung names no torch, so its re-run gets the lean fork server (a fresh
# interpreter, ``dojo_harness.lean``); naming numpy gets a forked one.
SERVERS = {"lean": "", "forked": "\n# numpy: the re-run's server is a fork of the launcher\n"}


@pytest.mark.parametrize("server", list(SERVERS))
@pytest.mark.parametrize("attack", [IN_A_FILE, IN_A_DAEMON, IN_A_MESSAGE_QUEUE], ids=["file", "daemon", "mqueue"])
def test_state_kept_outside_the_process_is_still_caught(sandbox: Sandbox, attack: str, server: str) -> None:
    # The same code passes Run: the visible tests run in one process.
    graded = sandbox.attack(REFERENCE + textwrap.dedent(attack) + SERVERS[server], mode="submit")
    assert graded.outcome == "failed", graded.describe()
    assert graded.result.state_leaks, graded.describe()
    first = graded.result.tests[0]
    assert first.outcome == "passed" and first.name not in graded.result.state_leaks, graded.describe()


@pytest.mark.parametrize("server", list(SERVERS))
def test_a_rerun_that_cannot_finish_fails_the_submit(sandbox: Sandbox, server: str) -> None:
    graded = sandbox.attack(REFERENCE + textwrap.dedent(STALLS_THE_RERUN) + SERVERS[server], mode="submit")
    assert graded.outcome == "timeout", graded.describe()
    assert graded.result.message == "", graded.describe()  # a code: grader.messages.RERUN_FAILED has the sentence
    assert graded.result.rerun_failure == "timeout", graded.describe()
