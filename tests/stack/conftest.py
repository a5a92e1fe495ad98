"""The production-shaped stack, on this machine, for the tests in this folder.

docker-compose.yml's own commands (tests/stack/compose.py reads them):
``migrate`` once, ``web`` on two ports (host A and host B), ``worker`` under
two node names (``worker@host-a``, ``worker@host-b``) and ``beat`` as its own
single process. As both "hosts" share this machine's cores, each runs one
gunicorn process and one grading process where compose sizes three and two.
They run with compose's environment (DEBUG off, HTTPS only behind the
load balancer, a random SECRET_KEY, named ALLOWED_HOSTS). They share what
hosts share in production and nothing else: a fresh database on the
project's PostgreSQL cluster (scripts/postgres.sh), the session's Redis
(``redis_server``, its database 1, so no message of another test reaches
these workers) and this machine's Docker with the sandbox image
(``sandbox_image``). ``worker_factory`` does not fit here: it starts its own
worker command against pytest-django's test database.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.faults.test_faults import wait_for

from . import compose

ROOT = compose.ROOT
BIN = Path(sys.executable).parent  # the image has gunicorn, celery and python on PATH; here the venv does
WORKER_NODES = {"a": "worker@host-a", "b": "worker@host-b"}
START_TIMEOUT_S = 180.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Process:
    """One service of the stack, in its own process group (a SIGKILL to the
    group takes the gunicorn or Celery children with it, as a host dying would)."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log_path: Path
    popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.popen = subprocess.Popen(self.argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def log(self, tail: int = 6000) -> str:
        return f"--- {self.name} ({' '.join(self.argv)}) ---\n" + self.log_path.read_text(errors="replace")[-tail:]

    def kill(self) -> None:
        """SIGKILL the whole group, now."""
        if self.popen is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(10)
            self.popen = None

    def stop(self, grace_s: float = 30.0) -> None:
        """SIGTERM (gunicorn and Celery shut down warm), then SIGKILL what is left."""
        if self.popen is not None and self.alive:
            self.popen.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(grace_s)
        self.kill()


@dataclass
class Stack:
    image_env: dict[str, str]  # what deploy/Dockerfile sets in the image
    variables: dict[str, str]  # what an operator puts in .env for compose's ${...}
    hosts: dict[str, str]  # compose's service addresses, as this machine has them
    machine_env: dict[str, str]  # this machine's paths and the test's tunables
    work_dir: Path
    database_url: str
    web_ports: dict[str, int]
    processes: dict[str, Process] = field(default_factory=dict)

    def env_for(self, service: str) -> dict[str, str]:
        """The environment compose gives ``service``, on this machine."""
        return {**self.image_env, **compose.environment(service, variables=self.variables, hosts=self.hosts), **self.machine_env}

    def web_url(self, host: str) -> str:
        return f"http://127.0.0.1:{self.web_ports[host]}"

    def logs(self) -> str:
        return "\n".join(process.log() for process in self.processes.values())

    def start(self, name: str, service: str, argv: list[str]) -> Process:
        process = Process(name, argv, self.env_for(service), self.work_dir / f"{name}.log")
        self.processes[name] = process
        process.start()
        return process

    def start_web(self, host: str) -> Process:
        # One gunicorn process per "host" instead of compose's three: the
        # threads and the worker class stay, and both hosts share these cores.
        argv = compose.command("web", replace={"--bind": f"127.0.0.1:{self.web_ports[host]}", "--workers": "1"})
        process = self.start(f"web-{host}", "web", argv)
        wait_for(lambda: _dead(process) or _healthy(self.web_url(host)), START_TIMEOUT_S, f"web on host {host}", self.logs)
        return process

    def worker(self, host: str) -> Process:
        """Host ``host``'s worker, started (and waited for) unless it runs."""
        name = f"worker-{host}"
        if name in self.processes and self.processes[name].alive:
            return self.processes[name]
        node = WORKER_NODES[host]
        # Several lives append to one log: wait for this life's "ready" line.
        log_path = self.work_dir / f"{name}.log"
        lives = log_path.read_text(errors="replace").count(f"{node} ready.") if log_path.exists() else 0
        # One grading process per "host": two hosts share this machine's cores.
        process = self.start(name, "worker", compose.command("worker", replace={"--concurrency": "1"}, append=("-n", node)))
        wait_for(
            lambda: _dead(process) or process.log_path.read_text(errors="replace").count(f"{node} ready.") > lives,
            START_TIMEOUT_S,
            f"{node} to be ready",
            self.logs,
        )
        return process

    def stop_all(self) -> None:
        for process in reversed(list(self.processes.values())):
            process.stop()

    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.database_url, autocommit=True) as conn:
            return list(conn.execute(query, params).fetchall())

    def manage(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``manage.py`` as the web service would run it."""
        return subprocess.run([str(BIN / "python"), "manage.py", *args], cwd=ROOT, env=self.env_for("web"), capture_output=True, text=True, timeout=300)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=2) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def _dead(process: Process) -> bool:
    if not process.alive:
        raise AssertionError(f"{process.name} exited early\n{process.log()}")
    return False


def _fresh_database(name: str) -> str:
    """``name`` on the project's PostgreSQL cluster (started if needed), empty."""
    import psycopg
    from psycopg import sql

    script = str(ROOT / "scripts" / "postgres.sh")
    subprocess.run([script, "start"], check=True)
    url = subprocess.run([script, "url", name], check=True, capture_output=True, text=True).stdout.strip()
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return url


def _drop_database(url: str) -> None:
    import psycopg
    from psycopg import sql

    base, name = url.rsplit("/", 1)
    with psycopg.connect(base + "/postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="module")
def stack(request: pytest.FixtureRequest, redis_server: Any, sandbox_image: str) -> Iterator[Stack]:
    """Migrated, with both web hosts, beat and host B's worker running (host
    A's worker starts on ``stack.worker("a")``); stopped and dropped after,
    its logs kept when a test failed."""
    failed_before = request.session.testsfailed
    work_dir = Path(tempfile.mkdtemp(prefix="dojo-stack-"))
    database_url = _fresh_database(f"dojo_stack_{os.getpid()}")
    web_ports = {"a": _free_port(), "b": _free_port()}
    origins = ",".join(f"https://127.0.0.1:{port}" for port in web_ports.values())
    image_env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'platform'}",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    # An operator's .env: a real key, the host names the load balancer answers to.
    variables = {"SECRET_KEY": secrets.token_urlsafe(50), "ALLOWED_HOSTS": "127.0.0.1", "CSRF_TRUSTED_ORIGINS": origins}
    hosts = {"DATABASE_URL": database_url, "REDIS_URL": f"redis://127.0.0.1:{redis_server.port}/1"}
    machine_env = {
        # This machine's paths, and what the sandbox-image service would build.
        "STATIC_ROOT": str(work_dir / "static"),
        "SANDBOX_IMAGE": sandbox_image,
        # One warm container per pool process, as worker_factory's workers
        # have: enough to grade without a cold start, light on a test machine.
        # NOTE: pool containers are owned by the machine's host name, which the
        # two "hosts" here share: a restarted worker removes the other's too
        # (sandbox/cleanup.py), and that one notices and starts a fresh one.
        "SANDBOX_POOL_SIZE": "1",
        # A sweep every few seconds, so the test sees beat's sweeps land.
        "GRADER_SWEEP_EVERY_S": "3",
        # A shared, loaded test machine's Docker can miss the harness's 25 s
        # start-up deadline (start_timeout, retried as ours): two more tries
        # than production's 3 before a job ends as infra_error.
        "GRADER_MAX_ATTEMPTS": "5",
        # Compose mounts a tmpfs at /run/prometheus in each container; here, a folder of the test's own.
        "PROMETHEUS_MULTIPROC_DIR": str(work_dir / "prometheus"),
    }
    built = Stack(image_env, variables, hosts, machine_env, work_dir=work_dir, database_url=database_url, web_ports=web_ports)
    try:
        migrate = subprocess.run(compose.command("migrate"), cwd=ROOT, env=built.env_for("migrate"), capture_output=True, text=True, timeout=600)
        assert migrate.returncode == 0, f"compose's migrate command failed:\n{migrate.stdout[-3000:]}\n{migrate.stderr[-3000:]}"
        built.start("beat", "beat", compose.command("beat", replace={"--schedule": str(work_dir / "celerybeat-schedule")}))
        built.start_web("a")
        built.start_web("b")
        built.worker("b")
        yield built
    finally:
        built.stop_all()
        _drop_database(database_url)
        if request.session.testsfailed > failed_before:
            print(f"\n[stack] a test failed: the services' logs are kept in {work_dir}")
        else:
            shutil.rmtree(work_dir, ignore_errors=True)
