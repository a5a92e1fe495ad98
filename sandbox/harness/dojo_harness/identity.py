"""What a root process of the harness does to itself before it becomes another uid.

Shared by the job master and the job process (their own oom score, the
harness uid), the launcher and the lean fork server (the learner's score and
uid) and the recycling forks (each uid of a finished job).
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


__all__ = ["become", "set_oom_score_adj"]
