"""Remove what learner code left behind: its processes and its files.

Runs as the learner uid (the fork server between two sessions), or with
the learner uid as its effective uid only (the launcher's killer before a
new fork server, ``identity.act_on``: out of the learner's reach). ``kill(-1, SIGKILL)`` reaches
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
import time
from pathlib import Path

LEARNER_WRITABLE = (Path("/tmp"), Path("/dev/shm"), Path("/dev/mqueue"), Path("/work/learner"))


def _status_fields(path: Path) -> dict[str, str]:
    text = path.read_text()
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def _is_zombie(fields: dict[str, str]) -> bool:
    return fields.get("State", "").strip().startswith(("Z", "X"))


def _any_task_alive(entry: Path) -> bool:
    """Whether any thread of the process is not a zombie.

    A process whose main thread ended alone (a raw ``SYS_exit``, not
    ``exit_group``) shows ``Z`` in its own status while its other threads
    run on: it is alive.
    """
    try:
        tasks = list((entry / "task").iterdir())
    except OSError:
        return False
    for task in tasks:
        try:
            if not _is_zombie(_status_fields(task / "status")):
                return True
        except OSError:
            continue
    return False


def live_processes(uid: int | None = None, exclude: tuple[int, ...] = (), *, not_of: frozenset[int] = frozenset()) -> list[int]:
    """Pids of live processes of real uid ``uid`` (None: any uid but those in ``not_of``), but ``exclude``.

    Live: any of its threads is not a zombie. ``/proc`` lists thread-group
    leaders only, so a zombie leader's threads are looked up one by one.
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in exclude:
            continue
        try:
            fields = _status_fields(entry / "status")
            owner = int(fields.get("Uid", "").split()[0])
        except (OSError, ValueError, IndexError):
            continue
        if (owner != uid) if uid is not None else (owner in not_of):
            continue
        if not _is_zombie(fields) or _any_task_alive(entry):
            found.append(int(entry.name))
    return found


def live_processes_of(uid: int) -> list[int]:
    """Pids of live processes of ``uid`` in this container, the caller's included."""
    return live_processes(uid)


def kill_until_gone(deadline: float) -> bool:
    """``kill(-1)`` until no process of this effective uid but this one is alive, or ``deadline``.

    True when none is. A killed process may take long to die (one that
    mapped gigabytes of page tables frees them first): it is waited for,
    and killed again, within the deadline. Called in a fork that has
    ``identity.act_on`` the uid, so none of its processes can signal it.
    """
    me = os.getpid()
    while True:
        kill_others_of_this_uid()
        if not [pid for pid in live_processes_of(os.geteuid()) if pid != me]:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)


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
