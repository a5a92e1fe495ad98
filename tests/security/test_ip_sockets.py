"""IP sockets: refused to learner code, and none may outlive a job.

The container's network is loopback alone, yet a TCP connection closed on
it stays in TIME_WAIT for a minute after every process of the job is dead,
its addresses (127.0.0.0/8) and ports chosen by the code that opened it.
A red-team used that to hand a Submit's hidden inputs to the next job in
the same reused container, a Run whose output the learner sees, and to tell
a re-run's fresh process that earlier tests had run. The seccomp profile
refuses AF_INET and AF_INET6 sockets; the master's check between jobs
throws away a container that holds any IP socket (gVisor, which uses its
own filter, relies on that check).

vsock sockets are refused too: they belong to no network namespace, and on
a worker that is itself a virtual machine (this one runs in Firecracker,
with /dev/vsock) they reach the hypervisor's host past ``--network none``.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator

import pytest

from sandbox.jobs import Limits
from sandbox.runner import SandboxRunner

from .support import ATTACK_LIMITS, REFERENCE, Sandbox, run_in_pool, sandbox_containers

pytestmark = [pytest.mark.docker, pytest.mark.security]

PROBE = REFERENCE + textwrap.dedent(
    """
    import json, socket

    _exact = kv_cache_bytes
    _done = []

    def _errno(family, kind):
        try:
            socket.socket(family, kind).close()
        except OSError as exc:
            return exc.errno
        return 0

    def kv_cache_bytes(*args, **kwargs):
        if not _done:
            _done.append(1)
            facts = {
                "tcp4": _errno(socket.AF_INET, socket.SOCK_STREAM),
                "udp4": _errno(socket.AF_INET, socket.SOCK_DGRAM),
                "tcp6": _errno(socket.AF_INET6, socket.SOCK_STREAM),
                "udp6": _errno(socket.AF_INET6, socket.SOCK_DGRAM),
                "unix": _errno(socket.AF_UNIX, socket.SOCK_STREAM),
                "vsock": _errno(socket.AF_VSOCK, socket.SOCK_STREAM),
            }
            left, right = socket.socketpair()
            left.sendall(b"ok")
            facts["socketpair"] = right.recv(2).decode()
            print("FACTS " + json.dumps(facts), flush=True)
        return _exact(*args, **kwargs)
    """
)


def test_learner_code_cannot_open_an_ip_socket_but_unix_sockets_work(sandbox: Sandbox) -> None:
    graded = sandbox.attack(PROBE)
    assert graded.outcome == "passed", graded.describe()
    line = next(line for line in graded.result.stdout.splitlines() if line.startswith("FACTS "))
    facts = json.loads(line.removeprefix("FACTS "))
    assert facts == {"tcp4": 1, "udp4": 1, "tcp6": 1, "udp6": 1, "unix": 0, "vsock": 1, "socketpair": "ok"}, facts


LEAVE_A_TIME_WAIT = REFERENCE + textwrap.dedent(
    """
    import socket

    _exact = kv_cache_bytes
    _done = []

    def kv_cache_bytes(*args, **kwargs):
        if not _done:
            _done.append(1)
            server = socket.socket()
            server.bind(("127.0.0.7", 0))
            server.listen(1)
            client = socket.create_connection(server.getsockname())
            accepted, _ = server.accept()
            client.close()  # the side that closes first keeps TIME_WAIT
            accepted.close()
            server.close()
            print("LEFT " + str(len(open("/proc/net/tcp").read().splitlines()) - 1), flush=True)
        return _exact(*args, **kwargs)
    """
)

READ_THE_TABLES = REFERENCE + textwrap.dedent(
    """
    _exact = kv_cache_bytes
    _done = []

    def kv_cache_bytes(*args, **kwargs):
        if not _done:
            _done.append(1)
            rows = sum(len(open(f"/proc/net/{t}").read().splitlines()) - 1 for t in ("tcp", "tcp6", "udp", "udp6"))
            print(f"FOUND {rows}", flush=True)
        return _exact(*args, **kwargs)
    """
)


@pytest.fixture
def reusing_without_the_socket_rules(sandbox_image: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[SandboxRunner]:
    """A pooled runner whose containers may open IP sockets, as under a
    runtime with its own seccomp filter: the check between jobs must hold
    on its own."""
    from sandbox import container

    profile = json.loads(container.seccomp_profile())
    profile["syscalls"] = [rule for rule in profile["syscalls"] if not set(rule["names"]) & {"socket", "socketcall"}]
    monkeypatch.setattr(container, "seccomp_profile", lambda: json.dumps(profile))
    runner = SandboxRunner(sandbox_image, startup_s=120, pool_size=1, pool_limits=Limits(**ATTACK_LIMITS), reuse_jobs=5)
    yield runner
    runner.close()


def test_a_container_left_holding_an_ip_socket_serves_no_further_job(reusing_without_the_socket_rules: SandboxRunner) -> None:
    runner = reusing_without_the_socket_rules
    first, used = run_in_pool(runner, LEAVE_A_TIME_WAIT)
    assert first.outcome == "passed", first.message
    assert "LEFT " in first.stdout and not first.stdout.split("LEFT ", 1)[1].startswith("0"), first.stdout
    second, fresh = run_in_pool(runner, READ_THE_TABLES)
    assert second.outcome == "passed", second.message
    assert fresh != used, "the job after one that left a TIME_WAIT socket ran in the same container"
    assert "FOUND 0" in second.stdout, second.stdout
    assert used not in sandbox_containers()
