"""How a sandbox container is configured: limits, privileges, kernel surface.

One function builds the whole ``docker create`` configuration of a job, so
tests can read it back and the pool starts containers exactly like cold ones.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any

from docker.types import DeviceRequest, LogConfig, Ulimit

from .jobs import Job

LABEL = "llm-dojo.sandbox"
SECCOMP_PROFILE = Path(__file__).resolve().parent / "seccomp.json"
# Host threads a gVisor Sentry and its Gofer need beside the learner's work.
RUNSC_SENTRY_TASKS = 512
# glibc's malloc asks the kernel for transparent huge pages (madvise) for
# the heap it grows: see ``container_options``' ``huge_pages``.
HUGE_PAGES_TUNABLE = "glibc.malloc.hugetlb=1"


@functools.cache
def seccomp_profile() -> str:
    """The seccomp profile of every sandbox container, as Docker's API takes it (inline JSON)."""
    return json.dumps(json.loads(SECCOMP_PROFILE.read_text()), separators=(",", ":"))


def cpuset_for(first_core: int | None, host_cores: int, cpus: float) -> str:
    """The cores a job's container is pinned to: ``ceil(cpus)`` of them from ``first_core`` on.

    "" (not pinned) when ``first_core`` is None or the job wants every core.
    Pinning keeps the harness and the learner's process, which answer each
    other a thousand times in a Submit, on one core: each answer then wakes
    its reader on the core it already runs on instead of across cores
    (``bench/experiments/pinning.py`` measures the difference).
    """
    wanted = max(1, math.ceil(cpus))
    if first_core is None or host_cores <= 0 or wanted >= host_cores:
        return ""
    return ",".join(str((first_core + offset) % host_cores) for offset in range(wanted))


def container_options(
    image: str,
    job: Job,
    *,
    gpu_enabled: bool,
    runtime: str = "",
    oom_floor: bool = True,
    gpu_device: str = "0",
    cpuset: str = "",
    huge_pages: bool = False,
) -> dict[str, Any]:
    """The full ``docker create`` configuration of one job (inspected by tests).

    ``runtime`` "runsc" runs the container under gVisor, a user-space kernel
    between the learner and the host's; "" is Docker's default (runc).
    ``oom_floor`` adds SYS_RESOURCE, with which root inside sets the learner's
    oom_score_adj so that the learner cannot lower it again; an engine that
    cannot grant it (``engine_grants``) runs without that floor.
    ``gpu_device`` is the one GPU (a Docker device id: index or UUID) a GPU
    job gets when ``gpu_enabled``: one device per worker slot, never all.
    ``cpuset`` pins the container to those host cores (``cpuset_for``).
    ``huge_pages`` lets the harness's processes keep their malloc heap in
    2 MiB transparent huge pages (where the host's THP mode is ``madvise``
    or ``always``). Importing torch leaves about 85 MiB of heap, and a
    Submit forks a torch-sized process per hidden test: in huge pages a
    fork copies one entry per 2 MiB instead of one per 4 KiB, and its exit
    frees as few (``bench/experiments/hugepages.py``). Nothing is shared that was not
    shared already: a child's first write to a huge page splits it and
    copies only the 4 KiB it wrote, as before.
    """
    limits = job.limits
    tmpfs_opts = f"rw,nosuid,nodev,size={limits.tmpfs_mb}m,nr_inodes={limits.tmpfs_inodes}"
    options: dict[str, Any] = {
        "image": image,
        "stdin_open": True,
        "tty": False,
        # detach=False makes docker-py set StdinOnce: closing our end of the
        # attached stdin then gives the harness EOF after the job payload.
        "detach": False,
        "network_mode": "none",
        # The entrypoint starts as root only to hand each process its uid; it
        # then drops to uid 1001 and the learner runs as 1000 + 2n (the
        # container's n-th job: 1002 first).
        "user": "0:0",
        "read_only": True,
        "tmpfs": {
            "/tmp": f"{tmpfs_opts},noexec,mode=1777",
            "/work": f"{tmpfs_opts},mode=755",
        },
        "shm_size": f"{limits.tmpfs_mb}m",
        "cap_drop": ["ALL"],
        # SYS_RESOURCE: root sets the learner's oom_score_adj, and its floor,
        # before the learner starts (the learner never holds a capability).
        "cap_add": ["SETUID", "SETGID", "CHOWN", *(["SYS_RESOURCE"] if oom_floor else [])],
        "security_opt": ["no-new-privileges", f"seccomp={seccomp_profile()}"],
        "pids_limit": limits.pids,
        "mem_limit": f"{limits.memory_mb}m",
        "memswap_limit": f"{limits.memory_mb}m",
        "nano_cpus": int(limits.cpus * 1_000_000_000),
        "ulimits": [
            Ulimit(name="nofile", soft=limits.nofile, hard=limits.nofile),
            Ulimit(name="fsize", soft=limits.fsize_mb * 1024 * 1024, hard=limits.fsize_mb * 1024 * 1024),
            Ulimit(name="core", soft=0, hard=0),
        ],
        # DOJO_IMAGE: the results name the image they were graded in (harness ``machine``).
        "environment": {"OMP_NUM_THREADS": str(max(1, int(limits.cpus))), "DOJO_IMAGE": image},
        "init": True,
        "hostname": "sandbox",
        "labels": {LABEL: "1"},
        "log_config": LogConfig(type=LogConfig.types.JSON, config={"max-size": "16m", "max-file": "1"}),
    }
    if cpuset:
        options["cpuset_cpus"] = cpuset
    if huge_pages:
        options["environment"]["GLIBC_TUNABLES"] = HUGE_PAGES_TUNABLE
    if runtime:
        options["runtime"] = runtime
    if runtime == "runsc":
        # Under gVisor the container's host tasks are the Sentry's threads,
        # not the learner's processes (those are the Sentry's goroutines): a
        # pids limit sized for the learner starves the Sentry. The learner's
        # process count is held inside, by RLIMIT_NPROC, which gVisor counts
        # per uid in its own kernel, so no other container shares the count.
        options["pids_limit"] = limits.pids + RUNSC_SENTRY_TASKS
        options["ulimits"] = [*options["ulimits"], Ulimit(name="nproc", soft=limits.pids, hard=limits.pids)]
    if limits.gpu and gpu_enabled:
        if not gpu_device:
            raise ValueError("a GPU job needs the id of the GPU it gets (gpu_device)")
        options["device_requests"] = [DeviceRequest(device_ids=[gpu_device], capabilities=[["gpu"]])]
    return options


def engine_grants(client: Any, image: str, capability: str) -> bool:
    """Whether this Docker engine can start a container with ``capability`` added.

    Some engines run without it in their own bounding set (a nested or
    locked-down host) and refuse every such container; the caller then
    leaves it out rather than fail every job.
    """
    import docker.errors

    try:
        container = client.containers.create(image, entrypoint=["/bin/true"], cap_drop=["ALL"], cap_add=[capability], network_mode="none", labels={LABEL: "probe"})
    except docker.errors.DockerException:
        return True  # no verdict: let the job itself report the problem
    try:
        container.start()
        return True
    except docker.errors.APIError as exc:
        return "apply caps" not in str(exc)
    finally:
        try:
            container.remove(force=True)
        except docker.errors.DockerException:
            pass
