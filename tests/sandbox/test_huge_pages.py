"""The harness's heap lives in transparent huge pages (SANDBOX_HUGE_PAGES).

A Submit forks a torch-sized process for every hidden test; with the malloc
heap in 2 MiB pages each fork copies and each exit frees 512 times fewer
page-table entries for it (``bench/experiments/hugepages.py`` measures the difference).
Checked from the configuration and from inside, where the learner's process
(a fork of the harness's) reads its own memory map.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench.experiments.hugepages import thp_mode
from core import runners
from sandbox.container import HUGE_PAGES_TUNABLE, container_options
from sandbox.jobs import Job, Limits
from sandbox.runner import SandboxRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sandbox" / "harness"))

from dojo_harness import main as harness_main  # type: ignore[import-not-found]
from dojo_harness.hugepages import HUGE_PAGE, _private_anonymous_ranges  # type: ignore[import-not-found]


def test_only_a_runner_with_huge_pages_asks_glibc_for_them() -> None:
    job = Job(mode="run", source="", tests={}, limits=Limits())
    assert "GLIBC_TUNABLES" not in container_options("image", job, gpu_enabled=False)["environment"]
    environment = container_options("image", job, gpu_enabled=False, huge_pages=True)["environment"]
    assert environment["GLIBC_TUNABLES"] == HUGE_PAGES_TUNABLE == "glibc.malloc.hugetlb=1"
    # The rest of the environment is what it was.
    assert environment["OMP_NUM_THREADS"] == "1" and environment["DOJO_IMAGE"] == "image"


def test_the_harness_knows_the_runners_request_for_huge_pages() -> None:
    # The harness folds its warm memory into huge pages only when the runner asked for them.
    assert harness_main.HUGE_PAGES_TUNABLE == HUGE_PAGES_TUNABLE


def test_only_whole_huge_pages_of_private_anonymous_memory_are_folded() -> None:
    maps = "\n".join(
        [
            "00400000-00600000 r-xp 00000000 00:28 1  /usr/bin/python3.11",  # code: never
            "00947000-00a85000 rw-p 00546000 00:28 1  /usr/bin/python3.11",  # a file's data: never
            "09bec000-0f200000 rw-p 00000000 00:00 0  [heap]",  # the heap: its whole 2 MiB pages
            "7f0000100000-7f0000700000 rw-p 00000000 00:00 0",  # anonymous, 6 MiB from 1 MiB in
            "7f0000800000-7f0000900000 rw-p 00000000 00:00 0",  # anonymous, under 2 MiB: nothing whole
            "7f0001000000-7f0001400000 rw-s 00000000 00:01 9  /dev/shm/x",  # shared: never
            "7ffe63616000-7ffe63637000 rw-p 00000000 00:00 0  [stack]",
        ]
    )
    ranges = _private_anonymous_ranges(maps)
    assert ranges == [(0x9C00000, 0xF200000), (0x7F0000200000, 0x7F0000600000)]
    assert all(start % HUGE_PAGE == 0 and end % HUGE_PAGE == 0 for start, end in ranges)


def test_the_setting_reaches_the_worker_runner(settings: object) -> None:
    runners.close_runners()
    try:
        settings.SANDBOX_POOL_SIZE = 0  # type: ignore[attr-defined]
        assert runners.default_runner().huge_pages is True
        settings.SANDBOX_HUGE_PAGES = False  # type: ignore[attr-defined]
        assert runners.default_runner().huge_pages is False
    finally:
        runners.close_runners()


PROBE = """
import os


def huge_kib():
    with open("/proc/self/smaps") as handle:
        return sum(int(line.split()[1]) for line in handle if line.startswith("AnonHugePages:"))


def huge_kib_outside_the_heap():
    # Python's arenas and other anonymous mappings: only the harness's
    # MADV_COLLAPSE puts huge pages there (glibc asks for the heap's).
    total, name = 0, ""
    with open("/proc/self/smaps") as handle:
        for line in handle:
            fields = line.split()
            if fields and "-" in fields[0] and not fields[0].endswith(":"):
                name = fields[5] if len(fields) > 5 else ""
            elif fields and fields[0] == "AnonHugePages:" and not name:
                total += int(fields[1])
    return total


def tunables():
    return os.environ.get("GLIBC_TUNABLES")


def thp_enabled():
    with open("/proc/self/status") as handle:
        return next((line.split()[1] for line in handle if line.startswith("THP_enabled:")), "absent")


def kib_for_buffers(count=100, size=300 * 1024):
    # Buffers of 300 KiB (mmap'd by malloc), one byte written in each: what a
    # thread pool's per-thread scratch looks like to the memory limit.
    import ctypes

    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p

    def rss_kib():
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024

    before = rss_kib()
    for _ in range(count):
        ctypes.memset(libc.malloc(size), 1, 1)
    return rss_kib() - before
"""

MEMORY_TESTS = {
    "test_memory.py": (
        "def test_memory(solution):\n"
        "    assert False, (solution.thp_enabled(), solution.kib_for_buffers())\n"
    )
}

COLLAPSE_TESTS = {
    "test_collapse.py": (
        "def test_collapse(solution):\n"
        "    assert False, (solution.huge_kib_outside_the_heap(), 0)\n"
    )
}

TESTS = {
    "test_pages.py": (
        "def test_pages(solution):\n"
        "    # Failing on purpose: the message carries what the learner's process read.\n"
        "    assert False, (solution.huge_kib(), solution.tunables())\n"
    )
}


def _probe(image: str, huge_pages: bool, tests: dict[str, str] = TESTS) -> tuple[int, object]:
    runner = SandboxRunner(image, startup_s=120, huge_pages=huge_pages)
    result = runner.run(Job(mode="run", source=PROBE, tests=tests))
    assert result.outcome == "failed", result.message
    message = result.tests[0].message
    # "AssertionError: (<kib>, <tunables>)"
    kib_text, tunables_text = message.split("(", 1)[1].split(")", 1)[0].split(", ", 1)
    return int(kib_text), tunables_text


@pytest.mark.docker
def test_the_learner_process_inherits_a_heap_in_huge_pages(sandbox_image: str) -> None:
    mode = thp_mode()
    if mode not in ("madvise", "always"):
        pytest.skip(f"the host's transparent huge pages are {mode!r}")
    huge_kib, tunables = _probe(sandbox_image, huge_pages=True)
    # torch's import leaves tens of MiB of heap; in huge pages at least some 2 MiB ones.
    assert huge_kib >= 2048, huge_kib
    # The learner's environment is still the fixed one: the setting is not learner-visible.
    assert tunables == "None"
    if mode == "madvise":
        # Without the setting glibc does not ask, and in madvise mode nothing is huge.
        assert _probe(sandbox_image, huge_pages=False)[0] == 0


@pytest.mark.docker
def test_the_learners_own_allocations_get_small_pages(sandbox_image: str) -> None:
    """A learner's buffers cost their own size of the memory limit, not 2 MiB each."""
    runner = SandboxRunner(sandbox_image, startup_s=120, huge_pages=True)
    result = runner.run(Job(mode="run", source=PROBE, tests=MEMORY_TESTS))
    assert result.outcome == "failed", result.message
    enabled, kib = result.tests[0].message.split("(", 1)[1].split(")", 1)[0].split(", ", 1)
    assert enabled.strip("'") == "0"
    # 100 buffers, one page touched in each: well under 100 huge pages (200 MiB).
    assert int(kib) < 20 * 1024, kib


@pytest.mark.docker
def test_the_harness_folds_its_python_objects_into_huge_pages(sandbox_image: str) -> None:
    """About 40 MiB of objects from importing torch sit in Python's own arenas, which
    nothing asks to be huge; the master folds them (MADV_COLLAPSE), and the
    learner's process, a fork of a fork of it, still shares some of them as
    huge pages (each process between them splits those it writes to)."""
    mode = thp_mode()
    if mode not in ("madvise", "always"):
        pytest.skip(f"the host's transparent huge pages are {mode!r}")
    folded_kib, _ = _probe(sandbox_image, huge_pages=True, tests=COLLAPSE_TESTS)
    assert folded_kib >= 2048, folded_kib
    if mode == "madvise":
        assert _probe(sandbox_image, huge_pages=False, tests=COLLAPSE_TESTS)[0] == 0
