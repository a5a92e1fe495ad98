"""What a root process of the harness does to itself before it becomes another uid.

Shared by the job master and the job process (their own oom score, the
harness uid), the launcher and the lean fork server (the learner's score and
uid) and the killing forks (``act_on``: each uid of a finished job, the
learner's before a re-run).
"""

from __future__ import annotations

import os


def set_oom_score_adj(value: int) -> None:
    """Set this process's ``oom_score_adj``: as root, with CAP_SYS_RESOURCE, the floor sticks too."""
    try:
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write(str(value))
    except OSError:
        pass


def become(uid: int) -> None:
    """Drop from root to ``uid`` (its own group, no other): every capability goes with it."""
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


# The real and saved uid of every process that kills another uid's processes
# (``act_on``). Odd, and not the harness's 1001: no learner (1000 + 2n) and
# no process of the harness ever runs as it, so no process can signal one
# that holds it.
KILLER_UID = 1003


def act_on(uid: int) -> None:
    """Drop from root to act on ``uid``'s processes and files, out of their reach.

    The effective uid becomes ``uid``: ``kill(-1)`` then reaches exactly
    the processes whose real or saved uid is ``uid`` (every process of
    that uid, none of any other), and files are deleted as ``uid`` owns
    them. The real and saved uid become ``KILLER_UID``: a process may
    signal another only if its real or effective uid is the other's real
    or saved uid, so none of ``uid``'s processes can signal this one, in
    the window before its ``kill(-1)`` or after. One ``setresuid``: there
    is no moment when this process is ``uid``'s alone. Every capability
    goes with root, as in ``become``.
    """
    os.setgroups([])
    os.setresgid(KILLER_UID, uid, KILLER_UID)
    os.setresuid(KILLER_UID, uid, KILLER_UID)


__all__ = ["KILLER_UID", "act_on", "become", "set_oom_score_adj"]
