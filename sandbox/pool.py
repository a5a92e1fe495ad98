"""Pre-started sandbox containers, each serving a few jobs one after another.

What makes a container slow is starting it and importing torch and pytest
in it (seconds of CPU on two cores). Its harness does all of that before it
reads a job, so a container started ahead of time is seconds warmer; and a
container whose harness has removed, and checked the removal of, everything
its last job left (``dojo_harness.recycle``) serves the next job as warm as
the first. docs/security.md argues why two learners' jobs stay isolated.

The pool keeps ``size`` such containers for one configuration of limits
(the default one: most rungs use it), counting those lent to a job. It
lends a new one only once its harness says it is warm (``@@DOJO-READY
0``), and prefers the one that has served the most jobs, so that the
others wait warm instead of ageing in step with it. A lent
container comes back only when its job ended normally (``reusable``), it
has served fewer than ``max_jobs`` jobs, and its harness said it is clean
(``@@DOJO-READY``); otherwise it is removed and the pool starts another in
the background, so a worker never waits for a refill it did not need. A job
whose limits differ, or one that finds the pool empty with nothing warming,
starts a container cold. A container that died (Docker restarted) is
noticed on take and replaced.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import docker
import docker.errors

from .jobs import Job, Limits

log = logging.getLogger(__name__)

POOL_LABEL = "llm-dojo.pool"
# How long a Submit waits for a marked container about to come back rather
# than mark the last clean one (``ContainerPool._keep_clean_for_runs``).
SUBMIT_WAITS_FOR_MARKED_S = 1.0


# A line the job master prints once a job's leftovers are gone and checked.
READY_PREFIX = b"@@DOJO-READY "
# Docker's attach stream (no TTY) multiplexes frames: 1 byte stream, 3 zero, 4 bytes size.
_FRAME_HEADER = 8


@dataclass
class Launched:
    """A started sandbox container with its attached stdin and stdout.

    Jobs go in on stdin, framed (``<length>\\n<json>``); the harness's
    events come back as lines on stdout. ``jobs`` counts the jobs sent.
    """

    container: Any
    sock: socket.socket
    launch_s: float
    started_at: float
    max_jobs: int = 1
    warm: bool = False
    jobs: int = 0
    # It ran learner code that saw a Submit's hidden inputs: from then on it
    # serves Submits only (``ContainerPool.take``). Its cgroup counters (peak
    # memory, CPU time, failed forks) add up over its life and cannot be
    # reset from inside, so a learner could write hidden inputs into them in
    # a Submit and read them back in a Run, whose output is shown.
    saw_hidden: bool = False
    # Lent to a Submit now: it comes back marked (``saw_hidden``).
    lent_to_submit: bool = False
    # When it was started: of two that served no job yet, the older is warmer.
    launched_at: float = field(default_factory=time.monotonic)
    _pending: bytearray = field(default_factory=bytearray)
    _lines: bytearray = field(default_factory=bytearray)

    @property
    def stdin(self) -> socket.socket:
        return self.sock

    def send_job(self, payload: bytes) -> None:
        self.jobs += 1
        self.sock.sendall(str(len(payload)).encode() + b"\n" + payload)

    def _stdout_chunks(self) -> Iterator[bytes]:
        """Stdout bytes from the multiplexed attach stream, until it ends."""
        while True:
            while len(self._pending) >= _FRAME_HEADER:
                stream = self._pending[0]
                size = int.from_bytes(self._pending[4:8], "big")
                if len(self._pending) < _FRAME_HEADER + size:
                    break
                data = bytes(self._pending[_FRAME_HEADER : _FRAME_HEADER + size])
                del self._pending[: _FRAME_HEADER + size]
                if stream == 1 and data:
                    yield data
            chunk = self.sock.recv(65536)
            if not chunk:
                return
            self._pending += chunk

    def lines(self, max_line: int) -> Iterator[bytes]:
        """Complete stdout lines (without the newline); a longer line is dropped.

        Each line leaves the buffer only as it is handed out: a reader that
        stops after the job's report leaves the lines behind it (the harness's
        ready line often comes in the same read) for ``wait_ready``. Split a
        whole read at once, and the ready line went with the abandoned
        generator: the runner waited READY_WAIT_S for it and removed a clean
        container (seen as a flaky reuse test in a clean-clone run).
        """
        chunks = self._stdout_chunks()
        while True:
            newline = self._lines.find(b"\n")
            if newline >= 0:
                line = bytes(self._lines[:newline])
                del self._lines[: newline + 1]
                yield line
                continue
            if len(self._lines) > max_line:
                self._lines.clear()
            chunk = next(chunks, None)
            if chunk is None:
                return
            self._lines += chunk

    def wait_ready(self, timeout_s: float) -> bool:
        """Whether the harness said it is clean after job ``jobs`` within ``timeout_s``."""
        expected = READY_PREFIX + str(self.jobs).encode()
        self.sock.settimeout(timeout_s)
        try:
            for line in self.lines(4096):
                if line == expected:
                    return True
        except OSError:
            return False
        finally:
            try:
                self.sock.settimeout(None)
            except OSError:
                pass
        return False

    def discard(self) -> None:
        """Close the attach socket and remove the container; a container already gone is fine, any other failure is logged."""
        try:
            self.sock.close()
        except OSError:
            pass
        try:
            self.container.remove(force=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.DockerException as exc:
            log.warning("could not remove sandbox container %s: %s", str(self.container.id)[:12], exc)


def launch(client: docker.DockerClient, options: dict[str, Any], max_jobs: int = 1) -> Launched:
    """Create, attach stdin and stdout to, and start one container (the harness then warms up)."""
    started = time.monotonic()
    environment = dict(options.get("environment") or {})
    environment["DOJO_MAX_JOBS"] = str(max_jobs)
    container = client.containers.create(**{**options, "environment": environment})
    try:
        attached = container.attach_socket(params={"stdin": 1, "stdout": 1, "stream": 1})
        container.start()
    except BaseException:
        container.remove(force=True)
        raise
    # docker-py's unix-socket attach wraps the raw socket; we read and write it directly.
    raw: socket.socket = attached._sock  # type: ignore[union-attr]
    return Launched(container=container, sock=raw, launch_s=time.monotonic() - started, started_at=time.monotonic(), max_jobs=max_jobs)


def limits_key(limits: Limits) -> tuple[Any, ...]:
    """What a container is created with; jobs may differ only in the rest (time, output)."""
    return (limits.memory_mb, limits.cpus, limits.pids, limits.tmpfs_mb, limits.tmpfs_inodes, limits.nofile, limits.fsize_mb, limits.gpu)


class ContainerPool:
    """Keeps ``size`` warm containers for one set of limits, lent ones included.

    A background thread starts containers; ``take`` lends one, waiting for a
    warming one rather than making the caller start its own; ``give_back``
    returns it for its next job, or removes it and lets the thread replace it.
    """

    def __init__(
        self,
        options_for: Callable[[Job], dict[str, Any]],
        limits: Limits,
        size: int,
        *,
        max_jobs: int = 1,
        client_factory: Callable[[], docker.DockerClient] = lambda: docker.from_env(timeout=60),
        max_idle_s: float = 600.0,
        owner: str = "",
        take_wait_s: float = 30.0,
        warm_wait_s: float = 120.0,
    ) -> None:
        self.limits = limits
        self.key = limits_key(limits)
        self.size = size
        self.max_jobs = max(1, max_jobs)
        self.max_idle_s = max_idle_s
        self.take_wait_s = take_wait_s
        self.warm_wait_s = warm_wait_s
        self._template = Job(mode="run", source="", tests={}, limits=limits)
        self._options_for = options_for
        self._client_factory = client_factory
        self._owner = owner
        self._ready: deque[Launched] = deque()
        self._lent = 0
        self._lent_to_submits = 0
        self._warming = 0
        self._lock = threading.Condition()
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------

    def start(self) -> ContainerPool:
        if self.size > 0 and self._thread is None:
            self._thread = threading.Thread(target=self._refill_forever, name="sandbox-pool", daemon=True)
            self._thread.start()
            self._wake.set()
        return self

    def close(self) -> None:
        self._stopped.set()
        self._wake.set()
        with self._lock:
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=30)
        with self._lock:
            ready, self._ready = list(self._ready), deque()
        for launched in ready:
            launched.discard()

    def refill_soon(self) -> None:
        """Ask the background thread to top the pool up."""
        self._wake.set()

    @property
    def ready(self) -> int:
        with self._lock:
            return len(self._ready)

    def holds(self, container_id: str) -> bool:
        """Whether a container waits in the pool for its next job."""
        return self.jobs_served(container_id) is not None

    def jobs_served(self, container_id: str) -> int | None:
        """How many jobs a container waiting in the pool has served (None: not waiting here)."""
        with self._lock:
            return next((item.jobs for item in self._ready if item.container.id == container_id), None)

    # --- use ---------------------------------------------------------------

    def take(self, limits: Limits, *, hidden: bool = False) -> Launched | None:
        """A warm container for a job with ``limits``, or None (start one cold).

        ``hidden``: the job is a Submit. Only a Submit may have a container
        that saw another Submit's hidden inputs (``Launched.saw_hidden``); a
        Run needing a clean one while only such containers wait, and none
        is warming or about to come back from a Run, has one of them
        removed, so the pool starts a clean one in its place.

        With none ready but one warming, or about to be started because the
        pool is short, waits for it (up to ``take_wait_s``): it is further
        along than a cold start would be. With every container lent, it
        does not wait.
        """
        if limits_key(limits) != self.key or self.size <= 0:
            return None
        started = time.monotonic()
        deadline = started + self.take_wait_s
        made_room = False
        while True:
            spent: Launched | None = None
            with self._lock:
                if not hidden and not made_room and self._ready and not self._eligible(hidden) and not self._clean_coming():
                    spent = self._next_ready(hidden=True)  # frees its slot for a clean one
                    made_room = True
                while (not self._eligible(hidden) or self._keep_clean_for_runs(hidden, started)) and (
                    self._warming or self._lent < self.size
                ) and not self._stopped.is_set():
                    if spent is not None:
                        break
                    self._wake.set()  # the refill thread tops the pool up now, not at its next round
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._lock.wait(min(left, 0.05 if hidden else 0.5))
                launched = self._next_ready(hidden) if spent is None and self._eligible(hidden) else None
                if launched is not None:
                    self._lent += 1
                    launched.lent_to_submit = hidden
                    self._lent_to_submits += hidden
            if spent is not None:
                spent.discard()
                self._wake.set()
                continue
            if launched is None:
                return None
            if self._alive(launched):
                launched.warm = True
                return launched
            self.give_back(launched, reusable=False)

    def _clean_coming(self) -> bool:
        """Whether a clean container is warming, or lent to a Run and about to come back (lock held)."""
        return bool(self._warming) or self._lent > self._lent_to_submits

    def _keep_clean_for_runs(self, hidden: bool, started: float) -> bool:
        """Whether a Submit should wait for a marked container rather than mark a clean one (lock held).

        Only a clean container serves a Run; once every one is marked, the
        next Run has one removed and waits for a replacement (seconds of
        CPU importing torch). So a Submit that finds no marked container
        ready, while one lent to a Submit is about to come back (its
        cleanup takes milliseconds), waits for it, up to
        ``SUBMIT_WAITS_FOR_MARKED_S``, instead of marking the last clean one.
        """
        if not hidden or not self._lent_to_submits or any(item.saw_hidden for item in self._ready):
            return False
        return time.monotonic() - started < SUBMIT_WAITS_FOR_MARKED_S

    def _eligible(self, hidden: bool) -> list[Launched]:
        """The waiting containers a job may have (lock held): any for a Submit, clean ones for a Run."""
        return [item for item in self._ready if hidden or not item.saw_hidden]

    def _next_ready(self, hidden: bool) -> Launched:
        """Of the containers the job may have, the one that saw hidden inputs
        (kept from Runs anyway), then the one that served the most jobs,
        else the one started first (lock held).

        So one container serves job after job while the others wait, warm.
        Taken in turn, two containers aged together: they reached
        ``max_jobs`` one job apart, and the next job found only replacements
        still importing torch (3 to 10 s of waiting under load, every
        ``2 * max_jobs`` jobs; bench/loadtest-results.json).
        """
        chosen = max(self._eligible(hidden), key=lambda item: (item.saw_hidden, item.jobs, -item.launched_at))
        self._ready.remove(chosen)
        return chosen

    def give_back(self, launched: Launched, *, reusable: bool) -> None:
        """End a loan: keep the container for another job, or remove it and refill."""
        keep = reusable and launched.jobs < launched.max_jobs and not self._stopped.is_set()
        with self._lock:
            self._lent = max(0, self._lent - 1)
            if launched.lent_to_submit:
                launched.lent_to_submit = False
                self._lent_to_submits = max(0, self._lent_to_submits - 1)
                self._lock.notify_all()
            if keep and len(self._ready) + self._lent < self.size:
                launched.started_at = time.monotonic()
                self._ready.append(launched)
                self._lock.notify_all()
                return
        launched.discard()
        self._wake.set()

    def _alive(self, launched: Launched) -> bool:
        if time.monotonic() - launched.started_at > self.max_idle_s:
            return False
        try:
            launched.container.reload()
        except docker.errors.DockerException:
            return False
        return bool(launched.container.status == "running")

    # --- the refill thread ---------------------------------------------------

    def _options(self) -> dict[str, Any]:
        options = self._options_for(self._template)
        labels = dict(options.get("labels") or {})
        labels[POOL_LABEL] = self._owner or "1"
        options["labels"] = labels
        return options

    def _short(self) -> bool:
        with self._lock:
            return len(self._ready) + self._lent + self._warming < self.size

    def _refill_forever(self) -> None:
        backoff = 1.0
        client: docker.DockerClient | None = None
        while not self._stopped.is_set():
            self._wake.wait(timeout=30)
            self._wake.clear()
            self._drop_stale()
            while not self._stopped.is_set() and self._short():
                with self._lock:
                    self._warming += 1
                try:
                    client = client or self._client_factory()
                    launched = launch(client, self._options(), self.max_jobs)
                    # Lent only once warm (``@@DOJO-READY 0``: torch and
                    # pytest imported): a job that finds only a warming one
                    # waits for it, or for a lent one to come back, whichever
                    # is first. Lending it at once made a job wait for its
                    # whole warm-up while a warm one came back (2-9 s).
                    if not launched.wait_ready(self.warm_wait_s):
                        launched.discard()
                        raise docker.errors.DockerException("a pre-started container did not warm up in time")
                except docker.errors.DockerException as exc:
                    # Docker down or restarting: keep trying, more slowly.
                    log.warning("sandbox pool could not start a container: %s", exc)
                    client = None
                    with self._lock:
                        self._warming -= 1
                        self._lock.notify_all()
                    self._stopped.wait(backoff)
                    backoff = min(backoff * 2, 30.0)
                    continue
                backoff = 1.0
                with self._lock:
                    self._warming -= 1
                    self._ready.append(launched)
                    self._lock.notify_all()

    def _drop_stale(self) -> None:
        with self._lock:
            keep = deque(item for item in self._ready if time.monotonic() - item.started_at <= self.max_idle_s)
            stale = [item for item in self._ready if item not in keep]
            self._ready = keep
        for launched in stale:
            launched.discard()
