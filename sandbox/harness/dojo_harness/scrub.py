"""Remove what learner code left behind: its processes and its files.

Runs as the learner uid (the fork server between two sessions, or the
launcher's killer before a new fork server). ``kill(-1, SIGKILL)`` reaches
every process of the caller's uid but the caller itself, and it is atomic
against fork (the kernel holds the task list while it signals), so a fork
bomb cannot outrun it. The learner can write only to the tmpfs folders
below: the image's root file system is read-only, and SysV IPC and POSIX
message queues are refused by the seccomp profile.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

LEARNER_WRITABLE = (Path("/tmp"), Path("/dev/shm"), Path("/work/learner"))


def kill_other_learner_processes() -> None:
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass  # nothing else runs under this uid


def wipe_learner_files() -> None:
    for folder in LEARNER_WRITABLE:
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink()
            except OSError:
                pass  # not the learner's (sticky /tmp): nothing it can use


def scrub() -> None:
    """Kill every other process of this uid, then delete its files."""
    kill_other_learner_processes()
    wipe_learner_files()
