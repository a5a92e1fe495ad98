"""Attacks on resources: processes, memory, CPU, time, disk, descriptors, output."""

from __future__ import annotations

import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from grader.constants import Kind
from sandbox.jobs import MAX_STORED_OUTPUT
from sandbox.runner import GRACE_S

from .support import REFERENCE, Graded, Sandbox, grade_through_the_site, host_process_count, stray_learner_processes

pytestmark = [pytest.mark.docker, pytest.mark.security]


def job_time_s(graded: Graded) -> float:
    """Seconds from the harness holding the job to the runner being done with it."""
    timings = graded.result.timings
    return timings["total_s"] - timings["harness_ready_s"]


def both(body: str) -> str:
    """A solution whose two functions both run ``body``."""
    return textwrap.dedent(body) + "\nmax_sequences = kv_cache_bytes\n"


def test_attack_1_fork_bomb(sandbox: Sandbox) -> None:
    before = host_process_count()
    graded = sandbox.attack(
        both(
            """
            import os, subprocess

            def kv_cache_bytes(*args, **kwargs):
                try:
                    subprocess.Popen(["/bin/sh", "-c", "b() { b | b & }; b"])
                except OSError:
                    pass
                while True:
                    try:
                        os.fork()
                    except OSError:
                        pass
            """
        ),
        time_s=5,
        pids=48,
    )
    assert graded.outcome in {"timeout", "error"}, graded.describe()
    assert stray_learner_processes() == []
    # Other work on this host comes and goes: allow for it, but not for a
    # surviving bomb (it would hold the whole pids limit, 48).
    assert min(_sampled_process_counts()) < before + 48


def _sampled_process_counts() -> list[int]:
    counts = []
    for _ in range(5):
        counts.append(host_process_count())
        time.sleep(0.2)
    return counts


def test_attack_2_memory_bomb(sandbox: Sandbox) -> None:
    graded = sandbox.attack(
        both(
            """
            def kv_cache_bytes(*args, **kwargs):
                hog = []
                while True:
                    hog.append(b"\\x01" * (16 * 2**20))  # written, so really resident
            """
        ),
        memory_mb=384,
    )
    assert graded.outcome == "memory_limit", graded.describe()
    # Swap equals memory: the cgroup peak never passes the limit.
    assert graded.result.peak_memory_bytes is not None
    assert graded.result.peak_memory_bytes <= 384 * 2**20


def test_attack_4_infinite_cpu_loop(sandbox: Sandbox) -> None:
    graded = sandbox.attack(both("def kv_cache_bytes(*args, **kwargs):\n    while True:\n        pass\n"), time_s=4)
    assert graded.outcome == "timeout", graded.describe()
    assert job_time_s(graded) < 4 + GRACE_S  # the worker slot is free within limit + grace


def test_attack_5_sleep_pause_and_sigstop(sandbox: Sandbox) -> None:
    graded = sandbox.attack(
        both(
            """
            import os, select, signal, time

            def kv_cache_bytes(*args, **kwargs):
                os.kill(os.getpid(), signal.SIGSTOP)  # stopped: nothing inside can time it out
                signal.pause()
                select.select([], [], [])
                time.sleep(10**9)
            """
        ),
        time_s=4,
    )
    assert graded.outcome == "timeout", graded.describe()
    assert job_time_s(graded) < 4 + GRACE_S


def test_attack_6_disk_fill(sandbox: Sandbox) -> None:
    graded = sandbox.attack(
        both(
            """
            import errno, os

            def fill(folder):
                seen = set()
                for i in range(10_000):
                    try:
                        with open(os.path.join(folder, f"fill{i}"), "wb") as handle:
                            while True:
                                handle.write(b"x" * 2**20)
                    except OSError as exc:
                        seen.add(errno.errorcode.get(exc.errno, str(exc.errno)))
                        if exc.errno != errno.EFBIG:
                            break
                return sorted(seen)

            def kv_cache_bytes(*args, **kwargs):
                found = {folder: fill(folder) for folder in ("/tmp", "/dev/shm", "/work/learner", "/var/tmp", "/")}
                raise OSError(f"writes failed: {found}")
            """
        ),
        tmpfs_mb=24,
        fsize_mb=8,
    )
    assert graded.outcome == "failed", graded.describe()
    message = graded.result.tests[0].message
    for folder in ("/tmp", "/dev/shm", "/work/learner"):
        assert f"'{folder}': ['EFBIG', 'ENOSPC']" in message, message
    for folder in ("/var/tmp", "/"):
        assert f"'{folder}': ['EROFS']" in message or f"'{folder}': ['EACCES']" in message, message


def test_attack_7_file_descriptors_and_inodes(sandbox: Sandbox) -> None:
    graded = sandbox.attack(
        both(
            """
            import errno, os

            def kv_cache_bytes(*args, **kwargs):
                found, handles = [], []
                try:
                    while True:
                        handles.append(open("/dev/null"))
                except OSError as exc:
                    found.append(errno.errorcode[exc.errno])
                for handle in handles:
                    handle.close()
                try:
                    for i in range(10**6):
                        os.close(os.open(f"/tmp/inode{i}", os.O_CREAT | os.O_WRONLY))
                except OSError as exc:
                    found.append(errno.errorcode[exc.errno])
                raise OSError(f"exhausted: {found} after {len(handles)} files and {i} inodes")
            """
        ),
        nofile=256,
        tmpfs_inodes=512,
    )
    assert graded.outcome == "failed", graded.describe()
    assert "exhausted: ['EMFILE', 'ENOSPC']" in graded.result.tests[0].message, graded.describe()


def test_attack_8_output_flood(sandbox: Sandbox, kv_rung: Any, learner: Any, django_capture_on_commit_callbacks: Any) -> None:
    code = both(
        """
        import sys

        def kv_cache_bytes(*args, **kwargs):
            while True:
                print("x" * 10_000)
                sys.stderr.write("y" * 10_000)
        """
    )
    # Through the site: the stored output of a Run is what the learner sees.
    submission = grade_through_the_site(sandbox, learner, kv_rung, Kind.RUN, code, django_capture_on_commit_callbacks)
    assert submission.outcome == "output_limit", (submission.outcome, submission.message)
    assert 0 < len(submission.stdout) <= MAX_STORED_OUTPUT + 200
    assert len(submission.stderr) <= MAX_STORED_OUTPUT + 200
    sandbox.assert_correct_still_passes()


def _cpu_usage_ns(container_id: str) -> int | None:
    for path in (f"/sys/fs/cgroup/cpuacct/docker/{container_id}/cpuacct.usage", f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/cpu.stat"):
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        if path.endswith("cpu.stat"):
            return int(text.split("usage_usec")[1].split()[0]) * 1000
        return int(text)
    return None


def test_attack_26_thread_hog(sandbox: Sandbox) -> None:
    """Many busy threads and a big torch thread pool get the quota, no more."""
    samples: list[tuple[float, int]] = []
    container: dict[str, str] = {}
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.2):
            if "id" in container:
                usage = _cpu_usage_ns(container["id"])
                if usage is not None:
                    samples.append((time.monotonic(), usage))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()

    def on_event(kind: str, data: dict[str, str]) -> None:
        if kind == "container":
            container["id"] = data["id"]

    try:
        graded = sandbox.grade(
            REFERENCE
            + textwrap.dedent(
                """
                import threading, time, torch

                def _burn(seconds):
                    end = time.monotonic() + seconds
                    while time.monotonic() < end:
                        pass

                _exact = kv_cache_bytes
                _hogged = []

                def kv_cache_bytes(*args, **kwargs):
                    if not _hogged:  # once is enough to measure
                        _hogged.append(True)
                        torch.set_num_threads(256)
                        workers = [threading.Thread(target=_burn, args=(4,)) for _ in range(32)]
                        for worker in workers:
                            worker.start()
                        a = torch.ones(256, 256)
                        for _ in range(5):
                            a @ a
                        for worker in workers:
                            worker.join()
                    return _exact(*args, **kwargs)
                """
            ),
            on_event=on_event,
            cpus=0.5,
            # Room for two torch pools of 256 threads: too few pids crash libgomp, which
            # is a different attack (#1).
            pids=1024,
            time_s=30,
        )
    finally:
        stop.set()
        sampler.join()
    assert graded.outcome == "passed", graded.describe()
    # No silent skip: every supported host (cgroup v1 or v2) exposes this.
    assert len(samples) >= 5, f"the container's CPU accounting could not be sampled ({len(samples)} samples)"
    # The busiest 2 s window: at most the quota (0.5 CPU), with slack for sampling.
    rates = []
    for i, (t0, u0) in enumerate(samples):
        later = [(t, u) for t, u in samples[i:] if t - t0 >= 2.0]
        if later:
            t1, u1 = later[0]
            rates.append((u1 - u0) / 1e9 / (t1 - t0))
    assert rates and max(rates) <= 0.5 * 1.25, rates
    sandbox.assert_correct_still_passes()
