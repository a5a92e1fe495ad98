"""The load test's CPU split names where the machine's time went (bench/cpu_split.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from bench.cpu_split import GROUPS, CpuSampler

# In make test's engine process (scripts/test.sh), one test at a time with
# the stack tests, whose web hosts run as "gunicorn" too.
pytestmark = pytest.mark.machine


def test_a_busy_process_shows_up_in_its_group_and_the_shares_add_up() -> None:
    # A process whose command line says "gunicorn" burns 1.5 s of CPU, then
    # idles past the next sample (what a process does after the last sample
    # before it ends is not counted: the sampler is for long-lived servers).
    burn = "import time\nwhile time.process_time() < 1.5: pass\ntime.sleep(1.2)\n"
    sampler = CpuSampler(interval_s=0.5).start()
    begin = time.time()
    subprocess.run([sys.executable, "-c", burn, "gunicorn"], check=True)
    time.sleep(0.6)
    sampler.stop()
    used = sampler.used(begin - 1, time.time() + 1)
    split = sampler.split(begin - 1, time.time() + 1)
    assert used is not None and split is not None
    elapsed, busy, seconds = used
    # All of it is counted in its group (it was seen alive, and its time is
    # kept after it ended), and nothing else runs as "gunicorn" here.
    assert 1.4 <= seconds["web (gunicorn)"] <= 1.7, used
    assert "web (gunicorn)" in {group for group, _ in GROUPS}
    # Its share is of the machine's busy time, which is at most what every
    # core could do in the window: so it is at least its part of that (the
    # rest of the machine may be busy, e.g. make test's other process). The
    # shares add up to the whole (to rounding) even when the groups' ticks,
    # read apart from the machine's, count a little more than its busy time.
    cores = os.cpu_count() or 1
    assert 0 < busy <= elapsed * cores * 1.02, used
    assert split["web (gunicorn)"] >= seconds["web (gunicorn)"] / (elapsed * cores) - 0.01, (split, used)
    shares = [share for group, share in split.items() if group != "busy cores (of all)"]
    assert abs(sum(shares) - 1.0) < 0.01, split


def test_no_split_without_two_samples_in_the_window() -> None:
    sampler = CpuSampler(interval_s=60).start()
    sampler.stop()
    assert sampler.split(0, 1) is None
