"""Fold the warm master's anonymous memory into transparent huge pages.

Every job forks the job master several times over (the job process, its
launcher, the learner's fork server, one learner process per isolated
test), and each fork copies one page-table entry per 4 KiB page the master
has mapped, each exit frees as many. Once warm, the master has about 40 MiB
of Python objects (from importing torch) in 4 KiB pages that nothing asked
to be huge: Python's own arenas. ``MADV_COLLAPSE`` (Linux 6.1) folds them
into 2 MiB pages on the spot (about 0.15 s, once per container), so a fork
of the master copies one entry per 2 MiB there. A process between the
master and the learner's (the job process, the launcher, the fork server)
splits again each huge page it writes to before it forks, so the gain
thins out down the chain: three job-by-job A/Bs (``bench/harness_ab.py``)
read 0.89-0.92x the container CPU of a Submit, and no change a Run could
tell from noise (0.89-1.02x).
Nothing is shared that was not shared already, and the learner's own new
memory still comes in 4 KiB pages (``PR_SET_THP_DISABLE`` on its fork
server). Where the kernel (or gVisor) does not know the call, or the host's
THP mode is ``never``, nothing changes.
"""

from __future__ import annotations

import ctypes

MADV_HUGEPAGE = 14
MADV_COLLAPSE = 25
HUGE_PAGE = 2 * 1024 * 1024


def _private_anonymous_ranges(maps_text: str) -> list[tuple[int, int]]:
    """The 2 MiB-aligned parts of the private, writable, anonymous mappings (the heap included)."""
    ranges = []
    for line in maps_text.splitlines():
        fields = line.split()
        if len(fields) < 5 or fields[1] != "rw-p":
            continue
        path = fields[5] if len(fields) > 5 else ""
        if path and path != "[heap]":
            continue
        start, end = (int(part, 16) for part in fields[0].split("-"))
        start = (start + HUGE_PAGE - 1) // HUGE_PAGE * HUGE_PAGE
        end = end // HUGE_PAGE * HUGE_PAGE
        if end > start:
            ranges.append((start, end))
    return ranges


def collapse_anonymous_memory() -> int:
    """Ask the kernel to fold this process's anonymous memory into huge pages; the bytes it took."""
    try:
        # The process's own symbols (libc's among them): find_library would
        # run ldconfig in a subprocess on every container's start-up.
        libc = ctypes.CDLL(None, use_errno=True)
        with open("/proc/self/maps") as handle:
            ranges = _private_anonymous_ranges(handle.read())
    except OSError:
        return 0
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    folded = 0
    for start, end in ranges:
        libc.madvise(start, end - start, MADV_HUGEPAGE)
        if libc.madvise(start, end - start, MADV_COLLAPSE) == 0:
            folded += end - start
    return folded
