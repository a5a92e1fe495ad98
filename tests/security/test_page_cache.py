"""The host's page cache is shared by every container of a worker (they read
the same image files), so what is cached is a mark one job can leave for
another: a red-team wrote 24 bytes of a Submit's hidden input into it
(reading a file set a bit, ``posix_fadvise(DONTNEED)`` cleared one) and read
them back in a later Run by timing one read per file. The seccomp profile
answers the eviction advice (``fadvise``, ``madvise`` COLD and PAGEOUT) with
success and does nothing, so a job cannot clear a bit.
"""

from __future__ import annotations

import json

import pytest

from .support import REFERENCE, Sandbox

pytestmark = [pytest.mark.docker, pytest.mark.security]

# Cache 40 of the image's files, ask the kernel to drop them, then time a
# one-byte read of each: measured here, 1-8 us from the cache and 46-97 us
# once evicted (hundreds on a slower disk). Printed as JSON: how many reads
# took over 20 us, and each read's time.
EVICT_AND_TIME = REFERENCE + """
import glob, json, mmap, os, time

_files = sorted(glob.glob("/opt/venv/lib/python3.11/site-packages/numpy/**/tests/test_*.py", recursive=True))[:40]
for _path in _files:
    with open(_path, "rb") as _f:
        _f.read()
_results = {}
for _path in _files:
    _fd = os.open(_path, os.O_RDONLY)
    try:
        os.posix_fadvise(_fd, 0, 0, os.POSIX_FADV_DONTNEED)
        _size = os.fstat(_fd).st_size
        with mmap.mmap(_fd, _size, prot=mmap.PROT_READ) as _map:
            try:
                _map.madvise(21)  # MADV_PAGEOUT (Linux 5.4), not named in Python 3.11's mmap
            except OSError:
                pass  # refused for a file the caller does not own, on most kernels
    finally:
        os.close(_fd)
_slow = 0
for _path in _files:
    _fd = os.open(_path, os.O_RDONLY)
    _started = time.perf_counter()
    os.pread(_fd, 1, 0)
    _elapsed = time.perf_counter() - _started
    _results[_path] = round(_elapsed * 1e6)
    _slow += _elapsed > 20e-6
    os.close(_fd)
print("PAGE-CACHE " + json.dumps({"files": len(_files), "slow": _slow, "us": sorted(_results.values())}))
"""


def test_a_job_cannot_evict_the_image_files_from_the_shared_page_cache(sandbox: Sandbox) -> None:
    graded = sandbox.grade(EVICT_AND_TIME)
    assert graded.outcome == "passed", graded.describe()
    line = next(line for line in graded.result.stdout.splitlines() if line.startswith("PAGE-CACHE "))
    seen = json.loads(line.removeprefix("PAGE-CACHE "))
    assert seen["files"] == 40, seen
    # Evicted, nearly every read goes to the disk; kept, a few are slow at most (a busy machine).
    assert seen["slow"] <= 10, seen
