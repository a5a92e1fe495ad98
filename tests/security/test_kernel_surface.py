"""The kernel interfaces a learner can reach: the seccomp profile and the OOM order.

The probe runs as learner code and tries each refused system call with
harmless arguments; every one must fail with EPERM (clone3 with ENOSYS, so
that libc falls back to clone, whose namespace flags are filtered).
"""

from __future__ import annotations

import json
import platform
import textwrap

import pytest

from .support import REFERENCE, Sandbox

pytestmark = [pytest.mark.docker, pytest.mark.security]

# x86_64 numbers; the test machine and CI are x86_64.
REFUSED = {
    "io_uring_setup": (425, 1),
    "userfaultfd": (323, 1),
    "perf_event_open": (298, 1),
    "bpf": (321, 1),
    "keyctl": (250, 1),
    "add_key": (248, 1),
    "unshare": (272, 1),
    "fsopen": (430, 1),
    "open_tree": (428, 1),
    "mount": (165, 1),
    "ptrace": (101, 1),
    "process_vm_readv": (310, 1),
    "pidfd_getfd": (438, 1),
    "shmget": (29, 1),
    "semget": (64, 1),
    "msgget": (68, 1),
    "mq_open": (240, 1),
    "personality": (135, 1),
    "clone3": (435, 38),
}

PROBE = REFERENCE + textwrap.dedent(
    """
    import ctypes, json, os

    _exact = kv_cache_bytes
    _done = []

    def _try(number):
        libc = ctypes.CDLL(None, use_errno=True)
        # Arguments that would be harmless if the call went through:
        # unshare(CLONE_NEWUSER), ptrace(PTRACE_TRACEME), keyctl(GET_KEYRING_ID)...
        args = {272: (0x10000000,), 101: (0,), 165: (0, 0, 0, 0, 0), 29: (0x1234, 4096, 0o1600), 240: (0, 0o100, 0o600, 0)}.get(number, (0, 0, 0, 0))
        result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
        return 0 if result >= 0 else ctypes.get_errno()

    def kv_cache_bytes(*args, **kwargs):
        if not _done:
            _done.append(1)
            facts = {"errno": {str(n): _try(n) for n in NUMBERS}}
            facts["oom_score_adj"] = int(open("/proc/self/oom_score_adj").read())
            try:
                with open("/proc/self/oom_score_adj", "w") as handle:
                    handle.write("0")
                facts["lowered_to"] = int(open("/proc/self/oom_score_adj").read())
            except OSError as exc:
                facts["lowered_to"] = f"refused: {exc.errno}"
            print("FACTS " + json.dumps(facts), flush=True)
        return _exact(*args, **kwargs)
    """
).replace("NUMBERS", repr(sorted(number for number, _ in REFUSED.values())))


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the probe uses x86_64 system call numbers")
def test_the_profile_refuses_each_listed_call_and_the_learner_dies_first(sandbox: Sandbox) -> None:
    graded = sandbox.grade(PROBE)
    assert graded.outcome == "passed", graded.describe()
    line = next(line for line in graded.result.stdout.splitlines() if line.startswith("FACTS "))
    facts = json.loads(line.removeprefix("FACTS "))
    got = {name: facts["errno"][str(number)] for name, (number, _) in REFUSED.items()}
    assert got == {name: errno for name, (_, errno) in REFUSED.items()}, got
    # Set from root before the learner ran: the learner is the OOM killer's first choice.
    assert facts["oom_score_adj"] == 1000, facts
    if sandbox.runner._oom_floor:
        # With SYS_RESOURCE (where the engine grants it) the score cannot be lowered again.
        assert str(facts["lowered_to"]).startswith("refused"), facts


def test_ordinary_torch_work_still_runs_under_the_profile(sandbox: Sandbox) -> None:
    work = REFERENCE + textwrap.dedent(
        """
        import threading, torch, multiprocessing

        _exact = kv_cache_bytes

        def kv_cache_bytes(*args, **kwargs):
            torch.set_num_threads(2)
            a = torch.randn(256, 256)
            (a @ a).sum().item()
            threads = [threading.Thread(target=lambda: (a * 2).sum()) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            return _exact(*args, **kwargs)
        """
    )
    graded = sandbox.grade(work)
    assert graded.outcome == "passed", graded.describe()
