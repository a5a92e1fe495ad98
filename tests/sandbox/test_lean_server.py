"""The re-run's lean fork server: a fresh interpreter without torch, for jobs that need none.

Checked from inside: learner code reads its own process (uid, capabilities,
descriptors, session, environment, oom score) in both runs of a Submit, so
a difference between the forked server of the first run and the spawned
server of the re-run shows as a state leak. Which server ran is seen from
whether torch is loaded in the learner's process.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from sandbox.jobs import Job, Limits
from tests.security.support import Sandbox

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sandbox" / "harness"))

from dojo_harness import main as harness_main  # type: ignore[import-not-found]
from dojo_harness.lean import lean_enough  # type: ignore[import-not-found]


@pytest.mark.parametrize(
    ("texts", "lean"),
    [
        (["def f(x):\n    return 2 * x\n", "def test_f(solution):\n    assert solution.f(2) == 4\n"], True),
        # A string that merely contains the word inside a longer name.
        (["config = {'torch_dtype': 'bfloat16'}\n"], True),
        (["import torch\n"], False),
        (["import numpy as np\n"], False),
        (["from torch import nn\n"], False),
        (["m = __import__('torch')\n"], False),
        (["x = 1  # numpy would do\n"], False),
    ],
)
def test_only_code_that_never_names_torch_or_numpy_is_lean(texts: list[str], lean: bool) -> None:
    assert lean_enough(texts[0], texts[1:]) is lean


def test_a_test_file_or_the_reference_naming_torch_keeps_the_server_warm() -> None:
    # A tensor reaches the learner only as an argument a test (or the
    # reference it calls) made: either names torch.
    plain = "def f(x):\n    return x\n"
    assert lean_enough(plain, ["def test_f(solution):\n    solution.f(1)\n", "def ref(x):\n    return x\n"])
    assert not lean_enough(plain, ["import torch\ndef test_f(solution):\n    solution.f(torch.ones(2))\n"])
    assert not lean_enough(plain, ["def test_f(solution):\n    pass\n", "import torch\ndef ref(x):\n    return torch.tensor(x)\n"])


# Facts of the learner's own process; "tor" + "ch" so that the check above
# does not see the name (as a learner hiding an import would).
FACTS = textwrap.dedent(
    """
    import os, sys

    def loaded():
        return ("tor" + "ch") in sys.modules

    class Box:
        def __init__(self, n):
            self.n = n

        def get(self):
            return [self.n, (self.n,), {"n": self.n}, 0.5, None]

    def make(n):
        return Box(n)

    def fail():
        raise ValueError("on purpose")

    def _readable(path):
        try:
            open(path, "rb").read()
        except OSError:
            return False
        return True

    def facts():
        status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
        parent = dict(line.split(":", 1) for line in open(f"/proc/{os.getppid()}/status").read().splitlines() if ":" in line)
        fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
        sockets = [fd for fd in fds if fd > 2 and os.path.exists(f"/proc/self/fd/{fd}") and os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")]
        return {
            "uids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid()],
            "groups": os.getgroups(),
            "parent_uid": int(parent["Uid"].split()[0]),
            "cap_eff": status["CapEff"].strip(),
            "parent_cap_eff": parent["CapEff"].strip(),
            "parent_readable": _readable(f"/proc/{os.getppid()}/environ"),
            "oom_score_adj": open("/proc/self/oom_score_adj").read().strip(),
            "session_leader_is_parent": os.getsid(0) == os.getppid(),
            "sockets": len(sockets),
            "other_fds": [fd for fd in fds if fd > 2 and fd not in sockets],
            "cwd": os.getcwd(),
            "env": sorted(os.environ),
            "path0": sys.path[0],
            "flags": [sys.flags.isolated, sys.flags.dont_write_bytecode],
        }
    """
)

TESTS = textwrap.dedent(
    """
    import pytest

    def test_torch_is_loaded(solution):
        # Objects, containers and exceptions cross the channel first: none
        # of that may load the tensor library in a process without it.
        assert solution.make(3).get() == [3, (3,), {"n": 3}, 0.5, None]
        with pytest.raises(ValueError):
            solution.fail()
        assert solution.loaded() is True

    def test_the_process_is_the_learner_s(solution):
        facts = solution.facts()
        uid = facts["uids"][0]
        assert uid >= 1002 and uid % 2 == 0 and facts["uids"] == [uid] * 4, facts
        assert facts["groups"] == [] and facts["parent_uid"] == uid, facts
        assert facts["cap_eff"] == facts["parent_cap_eff"] == "0000000000000000", facts
        assert facts["oom_score_adj"] == "1000", facts
        # The server is not dumpable: its memory and environment are out of reach.
        assert facts["parent_readable"] is False, facts
        assert facts["session_leader_is_parent"], facts
        # Its session socket, perhaps the listing's own descriptor, nothing else.
        assert facts["sockets"] == 1 and len(facts["other_fds"]) <= 1, facts
        assert facts["cwd"] == "/work/learner" and facts["path0"] == "/work/learner", facts
        assert facts["env"] == sorted(ENV), facts
        assert facts["flags"] == [1, 1], facts
    """
)


def _submit(sandbox: Sandbox, source: str) -> object:
    tests = TESTS.replace("sorted(ENV)", repr(sorted(harness_main.LEARNER_ENV)))
    return sandbox.runner.run(Job(mode="submit", source=source, tests={"test_hidden.py": tests}, limits=Limits(time_s=30)))


@pytest.mark.docker
def test_a_torch_free_job_reruns_without_torch_in_an_equally_confined_process(sandbox: Sandbox) -> None:
    result = _submit(sandbox, FACTS)
    # The first run's process (a fork of the warm master) has torch; the
    # re-run's does not: that test alone differs. Every fact of the process
    # is the same in both.
    assert result.state_leaks == ["test_torch_is_loaded"], result  # type: ignore[attr-defined]
    outcomes = {test.name: test.outcome for test in result.tests}  # type: ignore[attr-defined]
    assert outcomes == {"test_torch_is_loaded": "failed", "test_the_process_is_the_learner_s": "passed"}, result


@pytest.mark.docker
def test_a_job_naming_torch_reruns_with_it_loaded(sandbox: Sandbox) -> None:
    result = _submit(sandbox, FACTS + "\n# torch is imported by the server for code like this\n")
    assert result.outcome == "passed" and result.state_leaks == [], result  # type: ignore[attr-defined]
