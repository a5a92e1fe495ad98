"""Two learners' jobs in one reused container: nothing of the first reaches the second.

A pooled container serves several jobs (``SANDBOX_REUSE_JOBS``). Job A
below leaves everything a learner can leave: files in every writable
place (with permissions taken away from itself), a daemon that ignores
signals and holds an abstract Unix socket, another that creates files
without pause until it is killed, a named socket, environment
variables, and attempts at SysV and POSIX IPC objects. Job B, the next job
in the *same* container, looks for all of it and finds nothing. Under
gVisor, where the runtime lets learner code create IPC objects nothing
inside can list, every container serves one job: the same probe, and the
IPC objects A really created, are absent for B there too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sandbox.jobs import Limits
from sandbox.runner import SandboxRunner

from .support import ATTACK_LIMITS, REFERENCE, Sandbox, processes_in_container, run_in_pool, sandbox_containers
from .test_escape import probe_result, with_probe

pytestmark = [pytest.mark.docker, pytest.mark.security]

MARK = "left-by-job-a"
PLACES = ["/tmp/.a", "/tmp/a-dir/deep/file", "/dev/shm/.a", "/work/learner/.a", "/work/learner/locked/file"]

LEAVE_EVERYTHING = with_probe(
    f"""
    import ctypes, os, signal, socket, time

    def _ipc():
        libc = ctypes.CDLL(None, use_errno=True)
        made = {{}}
        made["shm"] = libc.shmget(0xD0C0, 4096, 0o1000 | 0o666)
        made["sem"] = libc.semget(0xD0C0, 1, 0o1000 | 0o666)
        made["msg"] = libc.msgget(0xD0C0, 0o1000 | 0o666)
        try:
            rt = ctypes.CDLL("librt.so.1", use_errno=True)
            made["mq"] = rt.mq_open(b"/dojo-a", 0o100 | 2, 0o600, None)
        except OSError:
            made["mq"] = -2
        return made

    def probe():
        for path in {PLACES!r}:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as handle:
                handle.write({MARK!r})
        os.chmod("/work/learner/locked", 0)  # a folder its owner cannot enter
        os.chmod("/tmp/a-dir/deep", 0o500)
        os.environ["DOJO_LEAK"] = {MARK!r}
        os.putenv("DOJO_LEAK_PUT", {MARK!r})
        named = socket.socket(socket.AF_UNIX)
        named.bind("/tmp/a.sock")
        named.listen(1)
        made = _ipc()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                server = socket.socket(socket.AF_UNIX)
                server.bind("\\0dojo-a-daemon")
                server.listen(4)
                while True:
                    try:
                        with open("/tmp/.daemon", "w") as handle:
                            handle.write({MARK!r})
                    except OSError:
                        pass
                    time.sleep(0.05)
            os._exit(0)
        if os.fork() == 0:
            # A second daemon creates files without pause, so that one is
            # being created when the kill comes: a process killed in a
            # system call finishes the call before it dies, and the file
            # appears after the kill.
            os.setsid()
            if os.fork() == 0:
                number = 0
                while True:
                    number += 1
                    for folder in ("/tmp", "/dev/shm", "/work/learner"):
                        try:
                            with open(folder + "/.churn-" + str(number), "w") as handle:
                                handle.write({MARK!r})
                            os.unlink(folder + "/.churn-" + str(number - 1))
                        except OSError:
                            pass
            os._exit(0)
        time.sleep(0.3)
        return {{"uid": os.getuid(), "ipc": made}}
    """
)

LOOK_FOR_EVERYTHING = with_probe(
    """
    import ctypes, os, socket

    def _walk(top):
        found = []
        for root, dirs, files in os.walk(top, onerror=lambda exc: found.append("unreadable " + str(exc.filename))):
            found += [os.path.join(root, name) for name in dirs + files]
        return found

    def probe():
        libc = ctypes.CDLL(None, use_errno=True)
        found = {"uid": os.getuid()}
        found["files"] = [path for top in ("/tmp", "/dev/shm", "/work") for path in _walk(top)]
        found["environ"] = sorted(key for key in os.environ if "LEAK" in key)
        others = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    others[entry] = os.stat("/proc/" + entry).st_uid
                except OSError:
                    pass
        found["learner_processes"] = sorted(pid for pid, uid in others.items() if uid not in (0, 1001, os.getuid()))
        found["sockets"] = [line.split()[-1] for line in open("/proc/net/unix").read().splitlines()[1:] if len(line.split()) >= 8]
        client = socket.socket(socket.AF_UNIX)
        try:
            client.connect("\\0dojo-a-daemon")
            found["daemon"] = "connected"
        except OSError as exc:
            found["daemon"] = type(exc).__name__
        ipc = {}
        ipc["shm"] = (libc.shmget(0xD0C0, 0, 0), ctypes.get_errno())
        ipc["sem"] = (libc.semget(0xD0C0, 0, 0), ctypes.get_errno())
        ipc["msg"] = (libc.msgget(0xD0C0, 0), ctypes.get_errno())
        try:
            rt = ctypes.CDLL("librt.so.1", use_errno=True)
            ipc["mq"] = (rt.mq_open(b"/dojo-a", 0), ctypes.get_errno())
        except OSError:
            ipc["mq"] = (-2, 0)
        found["ipc"] = ipc
        try:
            found["sysvipc"] = {kind: open("/proc/sysvipc/" + kind).read().splitlines()[1:] for kind in ("shm", "sem", "msg")}
        except OSError:
            found["sysvipc"] = "absent"
        return found
    """
)

ENOENT, EPERM = 2, 1


def _container(graded_events: list[tuple[str, dict[str, object]]]) -> str:
    return next(str(data["id"]) for kind, data in graded_events if kind == "container")


# What job B sees of its own: its empty home and the harness's closed folder.
OWN_FOLDERS = {"/work/learner", "/work/harness", "unreadable /work/harness"}


def _assert_nothing_found(found: dict[str, object]) -> None:
    files = found["files"]
    assert isinstance(files, list) and set(files) <= OWN_FOLDERS, files
    assert found["environ"] == [], found["environ"]
    assert found["learner_processes"] == [], found["learner_processes"]
    assert found["sockets"] == [], found["sockets"]
    assert found["daemon"] in {"ConnectionRefusedError", "FileNotFoundError"}, found["daemon"]
    ipc = found["ipc"]
    assert isinstance(ipc, dict)
    for kind, (value, errno) in ipc.items():
        # Nothing to open: refused outright (EPERM, our seccomp profile) or absent (ENOENT).
        assert (value == -1 and errno in (ENOENT, EPERM)) or value == -2, (kind, value, errno)
    assert found["sysvipc"] in ("absent", {"shm": [], "sem": [], "msg": []}), found["sysvipc"]


def test_the_next_job_in_a_reused_container_finds_nothing_of_the_last(sandbox: Sandbox) -> None:
    first = sandbox.grade(LEAVE_EVERYTHING)
    assert first.outcome == "passed", first.describe()
    left = probe_result(first.result.stdout)
    second = sandbox.grade(LOOK_FOR_EVERYTHING)
    assert second.outcome == "passed", second.describe()
    assert _container(second.events) == _container(first.events), "the second job should have reused the first one's container"
    assert second.result.timings["reused"] is True
    found = probe_result(second.result.stdout)
    assert found["uid"] != left["uid"], "each job of a container runs under its own learner uid"
    # Under runc our seccomp profile refused every IPC object to job A already.
    assert all(value == -1 for value in left["ipc"].values()), left["ipc"]
    _assert_nothing_found(found)
    sandbox.assert_correct_still_passes()


def test_under_gvisor_each_container_serves_one_job_and_ipc_dies_with_it(gvisor_sandbox: Sandbox) -> None:
    first = gvisor_sandbox.grade(LEAVE_EVERYTHING)
    assert first.outcome == "passed", first.describe()
    left = probe_result(first.result.stdout)
    # gVisor's own filter replaces ours: the IPC objects really exist there...
    assert left["ipc"]["shm"] >= 0 and left["ipc"]["mq"] >= 0, left["ipc"]
    second = gvisor_sandbox.grade(LOOK_FOR_EVERYTHING)
    assert second.outcome == "passed", second.describe()
    # ...so no container serves a second job.
    assert _container(second.events) != _container(first.events)
    assert second.result.timings["reused"] is False
    _assert_nothing_found(probe_result(second.result.stdout))


@pytest.fixture
def reusing(sandbox_image: str) -> Iterator[SandboxRunner]:
    runner = SandboxRunner(sandbox_image, startup_s=120, pool_size=1, pool_limits=Limits(**ATTACK_LIMITS), reuse_jobs=2)
    yield runner
    runner.close()


def _run(runner: SandboxRunner, source: str, **limits: Any) -> tuple[str, str]:
    result, container_id = run_in_pool(runner, source, **limits)
    return result.outcome, container_id


def test_a_container_is_replaced_after_its_last_job(reusing: SandboxRunner) -> None:
    outcomes_and_ids = [_run(reusing, REFERENCE) for _ in range(3)]
    assert [outcome for outcome, _ in outcomes_and_ids] == ["passed"] * 3
    (_, first), (_, second), (_, third) = outcomes_and_ids
    assert first == second != third
    assert first not in sandbox_containers() and not processes_in_container(first)


ANOMALIES = {
    "timeout": REFERENCE + "\nimport time\n\ndef kv_cache_bytes(*args, **kwargs):\n    time.sleep(60)\n",
    "killed fork server": REFERENCE + "\nimport os\n\ndef kv_cache_bytes(*args, **kwargs):\n    os.kill(os.getppid(), 9)\n    return 0\n",
    "output flood": REFERENCE + "\n\ndef kv_cache_bytes(*args, **kwargs):\n    while True:\n        print('x' * 10000)\n",
}


@pytest.mark.parametrize("anomaly", list(ANOMALIES))
def test_any_anomaly_throws_the_container_away(reusing: SandboxRunner, anomaly: str) -> None:
    outcome, used = _run(reusing, ANOMALIES[anomaly], time_s=3, output_kb=64)
    assert outcome not in ("passed", "failed", "infra_error"), outcome
    assert used not in sandbox_containers() and not processes_in_container(used)
    after, fresh = _run(reusing, REFERENCE)
    assert after == "passed" and fresh != used


def test_a_syntax_error_is_no_anomaly(reusing: SandboxRunner) -> None:
    outcome, used = _run(reusing, "def broken(:\n")
    assert outcome == "error"
    after, same = _run(reusing, REFERENCE)
    assert after == "passed" and same == used


# A Submit writes a hidden input into the container's cgroup counters, which
# add up over its life and cannot be reset from inside: it makes forks fail
# past the pids limit, as many times as the first hidden call's head count.
# A later Run in the same container read that count back in its output (a
# red-team, 2026-12-04). Peak memory and CPU time carried it as well.
COUNT_IN_FAILED_FORKS = REFERENCE + """
import os

_written = []

def _write(count):
    children = []
    try:
        while True:
            pid = os.fork()
            if pid == 0:
                import time
                time.sleep(30)
                os._exit(0)
            children.append(pid)
    except OSError:
        pass
    for _ in range(count - 1):
        try:
            os.fork()
        except OSError:
            pass
    for pid in children:
        os.kill(pid, 9)
        os.waitpid(pid, 0)

_kv = kv_cache_bytes

def kv_cache_bytes(config, *args, **kwargs):
    if not _written and isinstance(config, dict) and isinstance(config.get("num_attention_heads"), int):
        _written.append(1)
        _write(min(config["num_attention_heads"], 64))
    return _kv(config, *args, **kwargs)
"""

READ_FAILED_FORKS = REFERENCE + """
for _path in ("/sys/fs/cgroup/pids/pids.events", "/sys/fs/cgroup/pids.events"):
    try:
        print("FAILED-FORKS", open(_path).read().split()[1])
        break
    except OSError:
        pass
"""


@pytest.fixture
def reusing_four(sandbox_image: str) -> Iterator[SandboxRunner]:
    runner = SandboxRunner(sandbox_image, startup_s=120, pool_size=1, pool_limits=Limits(**ATTACK_LIMITS), reuse_jobs=4)
    yield runner
    runner.close()


def test_after_a_submit_a_container_never_serves_a_run(reusing_four: SandboxRunner) -> None:
    outcome, before = _run(reusing_four, REFERENCE)
    assert outcome == "passed"
    submitted, used = run_in_pool(reusing_four, COUNT_IN_FAILED_FORKS, mode="submit", time_s=20)
    assert used == before, "the Submit should have reused the Run's container"
    assert submitted.outcome in ("passed", "failed"), submitted
    read, after = run_in_pool(reusing_four, READ_FAILED_FORKS)
    assert read.outcome == "passed", read
    # A fresh container: no failed fork to read, and not the one the Submit wrote into.
    assert after != used
    assert "FAILED-FORKS 0" in read.stdout, read.stdout[-500:]


def test_a_submit_may_follow_a_submit_in_its_container(reusing_four: SandboxRunner) -> None:
    first, used = run_in_pool(reusing_four, REFERENCE, mode="submit", time_s=20)
    second, again = run_in_pool(reusing_four, REFERENCE, mode="submit", time_s=20)
    assert (first.outcome, second.outcome) == ("passed", "passed")
    # Its output is never shown: its pass/fail bits are the one channel a Submit has, whatever it reads.
    assert again == used


def test_the_probe_is_real() -> None:
    # The marker and places the probes use are the ones job A writes.
    assert MARK in LEAVE_EVERYTHING and all(path in LEAVE_EVERYTHING for path in PLACES)
    assert "dojo-a-daemon" in LOOK_FOR_EVERYTHING and "dojo-a-daemon" in LEAVE_EVERYTHING
