"""The lean fork server: a fresh interpreter, without torch, for code that needs none.

A fork server forked from the launcher carries everything the job master
imported (torch, numpy, pytest): in the sandbox, each of its children
costs about 3.5 ms of CPU to fork, run a test and exit, where a child of a
bare interpreter costs about 1.5 ms. The isolated re-run of a Submit
starts one child per hidden test (about 20), so for a rung whose code
never touches torch part of that Submit's CPU went into copying page
tables of a torch nobody used (0.86-0.90x the container CPU without it).

For such a job the launcher starts the re-run's server with
``posix_spawn`` (no page-table copy) as a fresh ``python -I -B``, which
runs ``boot`` below: it does, as root, exactly what a forked server does
before the learner's code can run (close every inherited descriptor but
its channel, ``oom_score_adj``, a new session, the learner uid, the fixed
environment), then imports a few common standard modules and serves as
``learner.main`` does. It holds less than a forked server: none of the
master's memory at all.

The harness asks for it only when ``lean_enough`` says that no value of
torch or numpy can reach the learner's process: neither the learner's
code, nor a test file, nor the reference names either. Values reach the
learner's code only as arguments the tests pass, so a test that builds a
tensor names torch (or calls the reference, which then does). A learner
who hides an import of torch from this check (``__import__("tor" +
"ch")``) pays that import in each of their own processes, within their own
time limit: slower for them, and nothing for anyone else.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable

from .identity import become, set_oom_score_adj

# Names whose values only a process that imported them can take apart.
HEAVY = re.compile(r"\b(?:torch|numpy)\b")

# Imported by the server before any session, so that each fresh process
# (a fork of it) shares them instead of importing them again: the standard
# modules a rung's solution is most likely to use. Kept small: the server
# starts once per re-run.
COMMON_MODULES = ("bisect", "collections", "dataclasses", "functools", "heapq", "itertools", "math", "random", "typing")

CHANNEL_FD = 3


def lean_enough(source: str, texts: Iterable[str]) -> bool:
    """Whether a fork server without torch can run this job's learner code.

    ``source`` is the learner's code; ``texts`` the job's test files and
    reference. False as soon as any of them names torch or numpy.
    """
    return not any(HEAVY.search(text) for text in (source, *texts))


def command(learner_uid: int, oom_score_adj: int) -> list[str]:
    """The argv that ``boot`` reads, for ``os.posix_spawn``."""
    harness_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = f"import sys; sys.path.insert(0, {harness_dir!r}); from dojo_harness.lean import boot; boot()"
    return [sys.executable, "-I", "-B", "-c", code, str(learner_uid), str(oom_score_adj)]


def boot() -> None:
    """In the spawned interpreter, still root: become a learner fork server.

    argv: learner uid, oom_score_adj. fd 0 is /dev/null, 1 and 2 the
    learner's output pipes, 3 the server's end of its channel; the launcher
    spawned it in a new session with the learner's fixed environment.
    """
    learner_uid, oom_score_adj = int(sys.argv[1]), int(sys.argv[2])
    # Only what the launcher handed over: no other descriptor of the launcher
    # (all are close-on-exec, and this makes sure).
    os.closerange(CHANNEL_FD + 1, 65536)
    # As root, before the uid changes: the score (and, with SYS_RESOURCE, its
    # floor) sticks, as for a forked server.
    set_oom_score_adj(oom_score_adj)
    become(learner_uid)
    if os.getuid() != learner_uid or os.geteuid() != learner_uid or os.getgid() != learner_uid:
        os._exit(70)
    # -I ignores PYTHONUNBUFFERED: line-buffer as a forked server does.
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True, write_through=True)  # type: ignore[union-attr]
    import importlib

    for name in COMMON_MODULES:
        importlib.import_module(name)
    import socket

    from .learner import main

    main(socket.socket(fileno=CHANNEL_FD))


__all__ = ["COMMON_MODULES", "HEAVY", "boot", "command", "lean_enough"]
