"""The root-side launcher: the one process that starts learner fork servers.

Forked by the harness before it drops its privileges, and after it has
imported torch and pytest, it stays root (with only SETUID, SETGID, CHOWN
and SYS_RESOURCE, the container's capabilities). Each fork server is a fork
of it that drops to the learner uid: starting one costs milliseconds, not
an import. It holds nothing of the job (it was forked before the job arrived), and a process
that drops from root to another uid is not dumpable, so a learner cannot
ptrace or read what it inherited. It answers two requests from the harness,
over a socketpair that no other process holds:

- ``start``: start a learner fork server and hand the harness the control
  end of its channel (SCM_RIGHTS);
- ``reset``: kill every process of the learner uid and delete its files,
  then start a new fork server, as ``start`` does; with ``lean`` true, a
  fresh interpreter without torch (``lean``) instead of a fork of itself.
  A killed process may take long to die (one that mapped gigabytes of
  page tables frees them first): the reset waits for it up to ``wait_s``,
  the job's own time, and only then says it failed.

The harness uid cannot signal root, and neither can the learner; the fork
that kills the learner's processes acts on their uid from a uid none of
them has (``identity.act_on``), so they cannot signal it either: the
learner can neither stop a reset nor fake one. Each server gets
``oom_score_adj`` 1000 from root, with CAP_SYS_RESOURCE, which also raises
the floor: the learner can never lower it again, and on memory pressure the
kernel kills the learner's processes before the harness's.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable

from . import lean
from .identity import act_on, become, set_oom_score_adj
from .protocol import recv_message, send_message
from .scrub import kill_until_gone, live_processes_of, wipe_learner_files

LEARNER_OOM_SCORE_ADJ = 1000
# How long a reset waits for the learner's processes to die when the
# harness does not say (``mutants``); a job's reset waits its time limit.
RESET_WAIT_S = 10.0


class Launcher:
    """Runs in the forked root process; see the module docstring."""

    def __init__(self, sock: socket.socket, learner_uid: int, env: dict[str, str], stdout_fd: int, stderr_fd: int) -> None:
        self.sock = sock
        self.learner_uid = learner_uid
        self.env = env
        self.stdout_fd = stdout_fd
        self.stderr_fd = stderr_fd
        self.servers: list[int] = []

    def _become_server(self, server_end: socket.socket) -> None:
        """In the forked child: turn this copy of the launcher into a fork server."""
        self.sock.close()
        os.dup2(self.stdout_fd, 1)
        os.dup2(self.stderr_fd, 2)
        os.closerange(3, server_end.fileno())
        os.closerange(server_end.fileno() + 1, 65536)
        # As root, before the uid changes: the score (and, with SYS_RESOURCE,
        # its floor) sticks.
        set_oom_score_adj(LEARNER_OOM_SCORE_ADJ)
        os.setsid()
        become(self.learner_uid)
        os.environ.clear()
        os.environ.update(self.env)
        sys.dont_write_bytecode = True
        for stream in (sys.stdout, sys.stderr):
            stream.reconfigure(line_buffering=True, write_through=True)  # type: ignore[union-attr]
        from .learner import main

        main(server_end)

    def _spawn_lean_server(self, server_end: socket.socket) -> int:
        """Start ``lean.boot`` in a fresh interpreter: no page table of this process is copied."""
        devnull = os.open(os.devnull, os.O_RDONLY)
        try:
            return os.posix_spawn(
                sys.executable,
                lean.command(self.learner_uid, LEARNER_OOM_SCORE_ADJ),
                self.env,
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, devnull, 0),
                    (os.POSIX_SPAWN_DUP2, self.stdout_fd, 1),
                    (os.POSIX_SPAWN_DUP2, self.stderr_fd, 2),
                    (os.POSIX_SPAWN_DUP2, server_end.fileno(), lean.CHANNEL_FD),
                ],
                setsid=True,
            )
        finally:
            os.close(devnull)

    def start_server(self, lean_server: bool = False) -> socket.socket:
        harness_end, server_end = socket.socketpair()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        if lean_server:
            pid = self._spawn_lean_server(server_end)
        else:
            pid = os.fork()
            if pid == 0:
                try:
                    harness_end.close()
                    self._become_server(server_end)
                finally:
                    os._exit(0)
        server_end.close()
        self.servers.append(pid)
        return harness_end

    def _reap(self) -> None:
        for pid in list(self.servers):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self.servers.remove(pid)

    def kill_learner(self, wait_s: float = RESET_WAIT_S) -> bool:
        """Kill every learner process and delete its files; True when none is left.

        One fork, acting on the learner uid out of its reach (``act_on``),
        kills until none is alive or ``wait_s`` has passed, then deletes
        the learner's files; the launcher checks again as root.
        """
        deadline = time.monotonic() + max(0.0, wait_s)
        pid = os.fork()
        if pid == 0:
            try:
                act_on(self.learner_uid)
                kill_until_gone(deadline)
                wipe_learner_files()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        self._reap()
        return not live_processes_of(self.learner_uid)

    def serve(self) -> None:
        # Warm: every fork server inherits these imports.
        from .learner import warm_imports

        warm_imports()
        while True:
            try:
                request = recv_message(self.sock)
            except (OSError, ValueError):
                return  # the harness is gone: so is this job
            op = request.get("op")
            if op not in ("start", "reset"):
                send_message(self.sock, {"ok": False, "error": f"unknown request {op!r}"})
                continue
            wait_s = request.get("wait_s")
            if op == "reset" and not self.kill_learner(float(wait_s) if isinstance(wait_s, (int, float)) else RESET_WAIT_S):
                send_message(self.sock, {"ok": False, "error": "learner processes survived the reset"})
                continue
            control = self.start_server(lean_server=op == "reset" and request.get("lean") is True)
            send_message(self.sock, {"ok": True})
            socket.send_fds(self.sock, [b"S"], [control.fileno()])
            control.close()


class LauncherFailed(RuntimeError):
    """The launcher could not do what the harness asked (ours, not the learner's)."""


class LauncherClient:
    """The harness's end: asks the launcher for fork servers."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def _request(self, op: str, **fields: object) -> socket.socket:
        send_message(self.sock, {"op": op, **fields})
        reply = recv_message(self.sock)
        if not reply.get("ok"):
            raise LauncherFailed(str(reply.get("error")))
        data, fds, _, _ = socket.recv_fds(self.sock, 1, 1)
        if data != b"S" or len(fds) != 1:
            raise LauncherFailed("no channel came back")
        return socket.socket(fileno=fds[0])

    def start(self) -> socket.socket:
        return self._request("start")

    def reset(self, lean: bool = False, wait_s: float = RESET_WAIT_S) -> socket.socket:
        """Kill all learner processes, delete their files, start a new server.

        ``lean``: a fresh interpreter without torch (``lean``), for a job
        that ``lean.lean_enough`` found needs none. ``wait_s``: how long
        the learner's killed processes may take to die; LauncherFailed
        when one is still alive after it.
        """
        return self._request("reset", lean=lean, wait_s=wait_s)


def fork_launcher(learner_uid: int, env: dict[str, str], stdout_fd: int, stderr_fd: int, close_in_child: Callable[[], None]) -> LauncherClient:
    """Fork the root launcher; returns the harness's client for it."""
    harness_end, launcher_end = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        try:
            harness_end.close()
            close_in_child()
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            os.close(devnull)
            Launcher(launcher_end, learner_uid, env, stdout_fd, stderr_fd).serve()
        finally:
            os._exit(0)
    launcher_end.close()
    return LauncherClient(harness_end)


__all__ = ["LauncherClient", "LauncherFailed", "fork_launcher"]
