"""Every limit of a job reaches its container: read back with ``docker inspect``
while a real job runs, and from inside, by the learner's own process."""

from __future__ import annotations

import json
import re
import textwrap
from typing import Any

import docker
import pytest

from sandbox.container import SECCOMP_PROFILE
from sandbox.jobs import Job, Limits
from sandbox.runner import LABEL, container_options
from tests.security.support import REFERENCE, Sandbox

LIMITS: dict[str, Any] = {"time_s": 9, "memory_mb": 448, "cpus": 0.5, "pids": 77, "tmpfs_mb": 23, "tmpfs_inodes": 999, "output_kb": 100, "nofile": 333, "fsize_mb": 5}

PROBE = REFERENCE + textwrap.dedent(
    """
    import json, os, resource

    def _status(field):
        for line in open("/proc/self/status"):
            if line.startswith(field + ":"):
                return line.split()[1]

    def _mounts():
        found = {}
        for line in open("/proc/self/mounts"):
            _, target, kind, options = line.split()[:4]
            if target in ("/", "/tmp", "/work", "/dev/shm"):
                found[target] = {"kind": kind, "options": sorted(options.split(","))}
        return found

    def _exec_in_tmp():
        path = "/tmp/run.sh"
        with open(path, "w") as handle:
            handle.write("#!/bin/sh\\necho hi\\n")
        os.chmod(path, 0o755)
        try:
            os.execv(path, [path]) if os.fork() == 0 else None
        except OSError as exc:
            os._exit(13 if exc.errno == 13 else 1)
        return os.wait()[1] >> 8

    _exact = kv_cache_bytes
    _probed = []

    def kv_cache_bytes(*args, **kwargs):
        if not _probed:
            _probed.append(True)
            facts = {
                "uid": [os.getuid(), os.geteuid(), os.getgid(), os.getegid()],
                "groups": os.getgroups(),
                "cap_eff": _status("CapEff"),
                "cap_bnd": _status("CapBnd"),
                "no_new_privs": _status("NoNewPrivs"),
                "nofile": list(resource.getrlimit(resource.RLIMIT_NOFILE)),
                "fsize": list(resource.getrlimit(resource.RLIMIT_FSIZE)),
                "mounts": _mounts(),
                "env": dict(os.environ),
                "exec_in_tmp": _exec_in_tmp(),
            }
            print("FACTS " + json.dumps(facts), flush=True)
        return _exact(*args, **kwargs)
    """
)


@pytest.mark.docker
def test_every_limit_reaches_the_container(sandbox: Sandbox) -> None:
    client = docker.from_env()
    seen: dict[str, Any] = {}

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind == "container":
            seen["id"] = data["id"]
        elif kind == "running":  # the harness has the job: inspect the live container
            seen["inspect"] = client.api.inspect_container(seen["id"])

    graded = sandbox.grade(PROBE, on_event=on_event, **LIMITS)
    assert graded.outcome == "passed", graded.describe()
    info = seen["inspect"]
    assert info["State"]["Running"] is True
    host, config = info["HostConfig"], info["Config"]

    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["Privileged"] is False
    assert host["Tmpfs"] == {
        "/tmp": "rw,nosuid,nodev,size=23m,nr_inodes=999,noexec,mode=1777",
        "/work": "rw,nosuid,nodev,size=23m,nr_inodes=999,mode=755",
    }
    assert host["ShmSize"] == 23 * 2**20
    assert not host.get("Binds") and not host.get("Mounts") and not info.get("Mounts")
    assert host["CapDrop"] == ["ALL"]
    # SYS_RESOURCE only where the engine can grant it (it sets the learner's oom floor).
    expected_caps = ["CHOWN", "SETGID", "SETUID", *(["SYS_RESOURCE"] if sandbox.runner._oom_floor else [])]
    assert sorted(cap.removeprefix("CAP_") for cap in host["CapAdd"]) == sorted(expected_caps)
    assert host["SecurityOpt"][0] == "no-new-privileges"
    assert len(host["SecurityOpt"]) == 2 and host["SecurityOpt"][1].startswith("seccomp=")
    assert json.loads(host["SecurityOpt"][1].removeprefix("seccomp=")) == json.loads(SECCOMP_PROFILE.read_text())
    assert host["PidsLimit"] == 77
    assert host["Memory"] == 448 * 2**20
    assert host["MemorySwap"] == 448 * 2**20  # swap = memory: no swap at all
    assert host["NanoCpus"] == 500_000_000
    assert {u["Name"]: (u["Soft"], u["Hard"]) for u in host["Ulimits"]} == {
        "nofile": (333, 333),
        "fsize": (5 * 2**20, 5 * 2**20),
        "core": (0, 0),
    }
    assert host["Init"] is True
    assert not host.get("DeviceRequests")
    assert host["LogConfig"]["Type"] == "json-file"
    assert config["User"] == "0:0"  # only the entrypoint; see the learner's own uid below
    assert config["Labels"][LABEL] == "1"
    env = dict(item.split("=", 1) for item in config["Env"])
    # The runner adds OMP_NUM_THREADS, DOJO_IMAGE (for the result's machine
    # facts, never in the learner's environment), GLIBC_TUNABLES (huge pages
    # for the harness's heap) and how many jobs the container serves (one:
    # started for this job alone); the rest is the image's fixed ENV.
    assert set(env) == {"OMP_NUM_THREADS", "DOJO_IMAGE", "GLIBC_TUNABLES", "DOJO_MAX_JOBS", "PATH", "LANG", "PYTHONDONTWRITEBYTECODE"}, env
    assert env["OMP_NUM_THREADS"] == "1" and env["DOJO_IMAGE"] == config["Image"]
    assert env["GLIBC_TUNABLES"] == "glibc.malloc.hugetlb=1"
    assert env["DOJO_MAX_JOBS"] == "1"
    assert not config.get("Cmd") or not any(re.search(r"[0-9a-f]{32}", part) for part in config["Cmd"])

    match = re.search(r"^FACTS (.*)$", graded.result.stdout, re.MULTILINE)
    assert match, graded.describe()
    facts = json.loads(match.group(1))
    assert facts["uid"] == [1002, 1002, 1002, 1002]
    assert facts["groups"] == []
    assert int(facts["cap_eff"], 16) == 0 and int(facts["cap_bnd"], 16) == (1 << 0) | (1 << 6) | (1 << 7)  # CHOWN, SETGID, SETUID
    assert facts["no_new_privs"] == "1"
    assert facts["nofile"] == [333, 333]
    assert facts["fsize"] == [5 * 2**20, 5 * 2**20]
    mounts = facts["mounts"]
    assert "ro" in mounts["/"]["options"]
    for target in ("/tmp", "/work", "/dev/shm"):
        assert mounts[target]["kind"] == "tmpfs"
        assert {"nosuid", "nodev"} <= set(mounts[target]["options"]), mounts[target]
    assert "noexec" in mounts["/tmp"]["options"]
    assert facts["exec_in_tmp"] == 13  # EACCES: nothing written to /tmp can be executed
    assert set(facts["env"]) - {"LC_CTYPE"} == {
        "PATH", "HOME", "TMPDIR", "LANG", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "OMP_NUM_THREADS",
        "USER", "LOGNAME",  # the per-job learner uids have no passwd entry: getpass reads these
    }
    assert facts["env"]["OMP_NUM_THREADS"] == "1"


def test_the_defaults_are_the_safe_ones() -> None:
    limits = Limits()
    assert (limits.time_s, limits.memory_mb, limits.cpus, limits.pids) == (30, 1024, 1.0, 128)
    assert (limits.tmpfs_mb, limits.tmpfs_inodes, limits.nofile, limits.fsize_mb, limits.gpu) == (64, 8192, 1024, 16, False)
    options = container_options("image", Job(mode="run", source="", tests={}), gpu_enabled=True)
    assert options["network_mode"] == "none" and options["read_only"] is True
    assert options["mem_limit"] == options["memswap_limit"] == "1024m"
    assert options["environment"] == {"OMP_NUM_THREADS": "1", "DOJO_IMAGE": "image"}
    assert "device_requests" not in options


def test_a_gpu_is_attached_only_when_the_job_asks_and_the_runner_allows() -> None:
    asks = Job(mode="run", source="", tests={}, limits=Limits(gpu=True))
    assert "device_requests" not in container_options("image", asks, gpu_enabled=False)
    requests = container_options("image", asks, gpu_enabled=True)["device_requests"]
    assert len(requests) == 1 and requests[0]["Capabilities"] == [["gpu"]]
    assert "device_requests" not in container_options("image", Job(mode="run", source="", tests={}), gpu_enabled=True)


def test_limits_from_rung_metadata_ignore_unknown_keys_and_keep_safe_defaults() -> None:
    limits = Limits.from_dict({"time_s": 5, "memory_mb": 256, "privileged": True})
    assert (limits.time_s, limits.memory_mb, limits.pids, limits.gpu) == (5, 256, 128, False)
    assert Limits.from_dict({}, gpu=True).gpu is True
