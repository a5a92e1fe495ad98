"""Where the machine's CPU went during a load test: sandbox containers, web,
grader worker, database, Redis, Docker engine, the simulated learners.

A background thread samples every few seconds: the machine's busy time from
``/proc/stat``, the CPU time of every host process (``/proc/<pid>/stat``,
kept after it ends) grouped by what it is, and the
sandbox containers' total from the Docker cgroup (which keeps the time of
containers that are gone). ``split(begin, end)`` gives each group's share of
the busy time between two samples, so a load-test step can say what its CPU
was spent on (issue 15: grading is CPU-bound; what is not grading is the
overhead to cut).

Linux only; on a machine where a source is missing its group reads 0 and
``sources`` says which were found.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
# The Docker cgroup's cumulative CPU time (ns): cgroup v1 with the cgroupfs
# driver, or v2 with the systemd driver (docker.service's containers).
DOCKER_CGROUPS = (
    Path("/sys/fs/cgroup/cpuacct/docker/cpuacct.usage"),
    Path("/sys/fs/cgroup/cpu,cpuacct/docker/cpuacct.usage"),
    Path("/sys/fs/cgroup/system.slice/cpu.stat"),
)
# First match wins: (group, words one of which the command line contains).
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("learners (locust)", ("locust",)),
    ("web (gunicorn)", ("gunicorn",)),
    ("grader worker (celery)", ("celery",)),
    ("database", ("postgres", "sqlite")),
    ("redis", ("redis-server",)),
    ("docker engine", ("dockerd", "containerd", "docker-proxy", "runc", "runsc")),
)
SANDBOX = "sandbox containers"
OTHER = "other"


def _machine_busy_s() -> float:
    with open("/proc/stat", encoding="ascii") as handle:
        fields = handle.readline().split()[1:]
    values = [int(value) for value in fields[:8]]
    busy = values[0] + values[1] + values[2] + values[5] + values[6] + values[7]  # user nice system irq softirq steal
    return busy / CLOCK_TICKS


def _docker_ns() -> tuple[float, str]:
    for path in DOCKER_CGROUPS:
        try:
            text = path.read_text(encoding="ascii")
        except OSError:
            continue
        if path.name == "cpu.stat":
            for line in text.splitlines():
                if line.startswith("usage_usec"):
                    return int(line.split()[1]) / 1e6, str(path)
            continue
        return int(text.strip()) / 1e9, str(path)
    return 0.0, ""


def docker_user_sys_s() -> tuple[float, float]:
    """The sandbox containers' cumulative (user, kernel) CPU seconds, from the
    same cgroup as ``_docker_ns``; (0, 0) where none is found."""
    for path in DOCKER_CGROUPS:
        try:
            if path.name == "cpu.stat":
                fields = dict(line.split() for line in path.read_text(encoding="ascii").splitlines() if len(line.split()) == 2)
                return int(fields["user_usec"]) / 1e6, int(fields["system_usec"]) / 1e6
            user = int((path.parent / "cpuacct.usage_user").read_text(encoding="ascii")) / 1e9
            kernel = int((path.parent / "cpuacct.usage_sys").read_text(encoding="ascii")) / 1e9
            return user, kernel
        except (OSError, ValueError, KeyError):
            continue
    return 0.0, 0.0


def _group_of(cmdline: str) -> str:
    for group, words in GROUPS:
        if any(word in cmdline for word in words):
            return group
    return OTHER


def stat_cpu_s(stat: str) -> float:
    """CPU seconds from a /proc/<pid>/stat line: utime and stime, fields 14
    and 15 of the whole line (a child's time is counted as its own while it
    lives, and kept once it is gone)."""
    fields = stat.rsplit(")", 1)[-1].split()
    return sum(int(value) for value in fields[11:13]) / CLOCK_TICKS


def _processes() -> dict[int, tuple[str, float]]:
    """pid -> (group, CPU seconds incl. reaped children) of every host process outside a container."""
    found: dict[int, tuple[str, float]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cgroup", encoding="ascii", errors="replace") as handle:
                cgroups = handle.read()
            if "/docker/" in cgroups or "/docker-" in cgroups:
                continue  # counted by the Docker cgroup
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as handle:
                stat = handle.read()
            with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        found[int(entry.name)] = (_group_of(cmdline or stat), stat_cpu_s(stat))
    return found


@dataclass
class Sample:
    at: float
    busy_s: float
    sandbox_s: float
    by_group: dict[str, float]


@dataclass
class CpuSampler:
    """Samples in a thread from ``start()`` to ``stop()``; see the module docstring."""

    interval_s: float = 5.0
    samples: list[Sample] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    # A process's CPU time the last time it was seen: one that ends between
    # two samples keeps what it had used until then.
    _seen: dict[int, tuple[str, float]] = field(default_factory=dict)
    _gone: dict[str, float] = field(default_factory=dict)

    def sample(self) -> Sample:
        current = _processes()
        for pid, (group, cpu) in self._seen.items():
            if pid not in current:
                self._gone[group] = self._gone.get(group, 0.0) + cpu
        self._seen = current
        by_group = dict(self._gone)
        for group, cpu in current.values():
            by_group[group] = by_group.get(group, 0.0) + cpu
        sandbox_s, source = _docker_ns()
        self.sources = {"machine": "/proc/stat", "processes": "/proc/<pid>/stat", SANDBOX: source or "not found"}
        taken = Sample(time.time(), _machine_busy_s(), sandbox_s, by_group)
        self.samples.append(taken)
        return taken

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def start(self) -> CpuSampler:
        self.sample()
        self._thread = threading.Thread(target=self._run, name="cpu-split", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()

    def used(self, begin: float, end: float) -> tuple[float, float, dict[str, float]] | None:
        """(seconds elapsed, busy CPU seconds, CPU seconds per group) between the samples nearest ``begin`` and ``end``."""
        inside = [sample for sample in self.samples if begin <= sample.at <= end]
        if len(inside) < 2:
            return None
        first, last = inside[0], inside[-1]
        seconds = {SANDBOX: last.sandbox_s - first.sandbox_s}
        for group in sorted(set(first.by_group) | set(last.by_group)):
            seconds[group] = seconds.get(group, 0.0) + max(0.0, last.by_group.get(group, 0.0) - first.by_group.get(group, 0.0))
        return last.at - first.at, last.busy_s - first.busy_s, seconds

    def split(self, begin: float, end: float) -> dict[str, float] | None:
        """Each group's share of the machine's busy CPU between the samples nearest ``begin`` and ``end`` (epoch seconds)."""
        used = self.used(begin, end)
        if used is None or used[1] <= 0:
            return None
        elapsed, busy, seconds = used
        # Per-process ticks and the machine's busy time are read a few
        # milliseconds apart and rounded to whole ticks each, so the groups
        # can add up to slightly more than the busy time (2% was seen in CI
        # on a short window): then the groups share what they counted.
        shares = {group: value / max(busy, sum(seconds.values())) for group, value in seconds.items()}
        # Processes born and gone between two samples, kernel threads.
        shares["unaccounted"] = max(0.0, 1.0 - sum(shares.values()))
        shares["busy cores (of all)"] = busy / elapsed / (os.cpu_count() or 1)
        return {group: round(share, 3) for group, share in shares.items()}
