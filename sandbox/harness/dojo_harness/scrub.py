"""Remove what learner code left behind: its processes and its files.

Runs as the learner uid (the fork server between two sessions, or the
launcher's killer before a new fork server). ``kill(-1, SIGKILL)`` reaches
every process of the caller's uid but the caller itself, and it is atomic
against fork (the kernel holds the task list while it signals), so a fork
bomb cannot outrun it. The learner can write only to the folders below:
the image's root file system is read-only, and SysV IPC and the POSIX
message-queue calls are refused by the seccomp profile. ``/dev/mqueue`` is
among them all the same: a plain ``open(..., O_CREAT)`` there makes a
queue without ``mq_open``, and a queue left there would outlive the
session like a file in ``/tmp``.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
from pathlib import Path

LEARNER_WRITABLE = (Path("/tmp"), Path("/dev/shm"), Path("/dev/mqueue"), Path("/work/learner"))


def live_processes_of(uid: int) -> list[int]:
    """Pids of live (not zombie) processes of ``uid`` in this container, the caller's included."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        uids = fields.get("Uid", "").split()
        if uids and int(uids[0]) == uid and not fields.get("State", "").strip().startswith("Z"):
            found.append(int(entry.name))
    return found


def kill_others_of_this_uid() -> None:
    """kill(-1, SIGKILL): every process the caller may signal but itself (and PID 1)."""
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass  # nothing else runs under this uid


def _unprotect(path: str) -> None:
    """Give the owner back write and search on a folder it had locked (chmod 0)."""
    try:
        mode = os.lstat(path).st_mode
        if stat.S_ISDIR(mode):
            os.chmod(path, stat.S_IMODE(mode) | 0o700)
    except OSError:
        pass


def remove_entry(entry: Path) -> None:
    """Delete a file or a whole folder of this uid's, even one it had locked itself out of."""
    if entry.is_dir() and not entry.is_symlink():
        _unprotect(str(entry))
        for root, dirs, _ in os.walk(entry, onerror=lambda _exc: None):
            for name in dirs:
                _unprotect(os.path.join(root, name))
        shutil.rmtree(entry, ignore_errors=True)
        return
    try:
        entry.unlink()
    except OSError:
        pass  # not the learner's (sticky /tmp): nothing it can use


def wipe_learner_files() -> None:
    for folder in LEARNER_WRITABLE:
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            remove_entry(entry)


def scrub() -> None:
    """Kill every other process of this uid, then delete its files."""
    kill_others_of_this_uid()
    wipe_learner_files()
