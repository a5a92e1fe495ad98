"""Pre-started sandbox containers, each used for exactly one job.

A fresh container per job is the isolation we promise; what makes it slow
is starting one and importing torch and pytest in it (seconds on two
cores). The harness does all of that before it reads the job from stdin, so
a container started ahead of time is just as isolated and seconds warmer.

The pool keeps ``size`` such containers for one configuration of limits
(the default one: most rungs use it). A job whose limits differ, or one that
finds the pool empty, starts a container cold. A taken container is never
returned: after its job it is removed and the pool starts another, after
the job, so refilling never competes with the job it replaces. A container
that died (Docker restarted) is noticed on take and replaced.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import docker
import docker.errors

from .jobs import Job, Limits

log = logging.getLogger(__name__)

POOL_LABEL = "llm-dojo.pool"


@dataclass
class Launched:
    """A started sandbox container waiting for its job on an attached stdin."""

    container: Any
    stdin: socket.socket
    launch_s: float
    started_at: float
    warm: bool = False

    def discard(self) -> None:
        try:
            self.stdin.close()
        except OSError:
            pass
        try:
            self.container.remove(force=True)
        except docker.errors.DockerException:
            pass


def launch(client: docker.DockerClient, options: dict[str, Any]) -> Launched:
    """Create, attach stdin to and start one container (the harness then warms up)."""
    started = time.monotonic()
    container = client.containers.create(**options)
    try:
        attached = container.attach_socket(params={"stdin": 1, "stream": 1})
        container.start()
    except BaseException:
        container.remove(force=True)
        raise
    # docker-py's unix-socket attach wraps the raw socket; we need it to
    # half-close stdin (EOF for the harness) after the job.
    raw: socket.socket = attached._sock  # type: ignore[union-attr]
    return Launched(container=container, stdin=raw, launch_s=time.monotonic() - started, started_at=time.monotonic())


def limits_key(limits: Limits) -> tuple[Any, ...]:
    """What a container is created with; jobs may differ only in the rest (time, output)."""
    return (limits.memory_mb, limits.cpus, limits.pids, limits.tmpfs_mb, limits.tmpfs_inodes, limits.nofile, limits.fsize_mb, limits.gpu)


class ContainerPool:
    """Keeps ``size`` warm containers for one set of limits, in a background thread."""

    def __init__(
        self,
        options_for: Callable[[Job], dict[str, Any]],
        limits: Limits,
        size: int,
        *,
        client_factory: Callable[[], docker.DockerClient] = lambda: docker.from_env(timeout=60),
        max_idle_s: float = 600.0,
        owner: str = "",
    ) -> None:
        self.limits = limits
        self.key = limits_key(limits)
        self.size = size
        self.max_idle_s = max_idle_s
        self._template = Job(mode="run", source="", tests={}, limits=limits)
        self._options_for = options_for
        self._client_factory = client_factory
        self._owner = owner
        self._ready: deque[Launched] = deque()
        self._lock = threading.Lock()
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
        if self._thread is not None:
            self._thread.join(timeout=30)
        with self._lock:
            ready, self._ready = list(self._ready), deque()
        for launched in ready:
            launched.discard()

    def refill_soon(self) -> None:
        """Ask for a refill (the runner calls this when a job has finished)."""
        self._wake.set()

    @property
    def ready(self) -> int:
        with self._lock:
            return len(self._ready)

    # --- use ---------------------------------------------------------------

    def take(self, limits: Limits) -> Launched | None:
        """A warm container for a job with ``limits``, or None (start one cold)."""
        if limits_key(limits) != self.key:
            return None
        while True:
            with self._lock:
                if not self._ready:
                    return None
                launched = self._ready.popleft()
            if self._alive(launched):
                launched.warm = True
                return launched
            launched.discard()

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

    def _refill_forever(self) -> None:
        backoff = 1.0
        client: docker.DockerClient | None = None
        while not self._stopped.is_set():
            self._wake.wait(timeout=30)
            self._wake.clear()
            self._drop_stale()
            while not self._stopped.is_set() and self.ready < self.size:
                try:
                    client = client or self._client_factory()
                    launched = launch(client, self._options())
                except docker.errors.DockerException as exc:
                    # Docker down or restarting: keep trying, more slowly.
                    log.warning("sandbox pool could not start a container: %s", exc)
                    client = None
                    self._stopped.wait(backoff)
                    backoff = min(backoff * 2, 30.0)
                    continue
                backoff = 1.0
                with self._lock:
                    self._ready.append(launched)

    def _drop_stale(self) -> None:
        with self._lock:
            keep = deque(item for item in self._ready if time.monotonic() - item.started_at <= self.max_idle_s)
            stale = [item for item in self._ready if item not in keep]
            self._ready = keep
        for launched in stale:
            launched.discard()
