"""A throw-away platform stack for ``make loadtest`` and ``make bench``.

Redis (own data dir, no persistence), a Celery worker with beat and
gunicorn serving the platform with DEBUG off, on a fresh SQLite database
under the run's work folder, with the sandbox image ensured, the catalog
loaded, static files collected and learner accounts created. Every process
runs in its own session so that one signal reaches its children, and
``Stack.stop`` stops them newest first.

Internal: ``python -m bench.stack --create-learners N`` creates the
accounts; ``prepare`` runs it with the stack's environment.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

REPO_ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
USER_PREFIX = "loadtest-"
PASSWORD = "loadtest-pass-2f9c"  # a throw-away database on loopback; never a real account
HEALTH_WAIT_S = 60.0
POSTGRES_DATABASE = "dojo_loadtest"  # on the project's cluster, recreated by every run
# Seconds each process gets to stop on SIGTERM before its group is killed:
# the worker finishes the jobs it holds (up to a Submit's length).
STOP_GRACE_S = {"web": 30.0, "worker": 150.0, "redis": 15.0}


def _log(message: str) -> None:
    print(f"[stack] {message}", flush=True)


@dataclass(frozen=True)
class StackConfig:
    """Where the stack runs and how big it is."""

    work_dir: Path
    web_port: int
    redis_port: int
    web_workers: int
    web_threads: int
    worker_concurrency: int
    users: int
    # "sqlite" (a file in work_dir) or "postgres" (a fresh database on the
    # project's cluster, scripts/postgres.sh); DATABASE_URL overrides both.
    database: str = "sqlite"

    @property
    def log_dir(self) -> Path:
        return self.work_dir / "log"

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def stack_env(config: StackConfig) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "platform")]),
            # Production-like: DEBUG off, static files collected and served by whitenoise.
            "DEBUG": "0",
            "SECRET_KEY": env.get("SECRET_KEY") or secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "STATIC_ROOT": str(config.work_dir / "static"),
            "REDIS_URL": f"redis://127.0.0.1:{config.redis_port}/0",
            "LOG_LEVEL": env.get("LOG_LEVEL", "WARNING"),
        }
    )
    if config.database == "postgres":
        env.setdefault("DATABASE_URL", postgres_url(POSTGRES_DATABASE))
    env.setdefault("DATABASE_URL", f"sqlite:///{config.work_dir / 'db.sqlite3'}")
    return env


def postgres_url(database: str) -> str:
    """The URL of ``database`` on the project's PostgreSQL cluster, started if it is not running."""
    script = str(REPO_ROOT / "scripts" / "postgres.sh")
    subprocess.run([script, "start"], check=True)
    return subprocess.run([script, "url", database], check=True, capture_output=True, text=True).stdout.strip()


def recreate_postgres_database(url: str) -> None:
    """Drop and create the database of ``url`` (connecting to the cluster's maintenance database)."""
    import psycopg
    from psycopg import sql

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def run_step(config: StackConfig, what: str, argv: Sequence[str], env: dict[str, str], log_name: str) -> str:
    """Run one preparation step to completion; its output goes to a log file."""
    _log(what)
    log_path = config.log_dir / log_name
    with log_path.open("ab") as log_file:
        proc = subprocess.run(list(argv), cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=log_file, check=False)
        log_file.write(proc.stdout)
    if proc.returncode != 0:
        tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-20:]
        raise SystemExit(f"{what} failed (exit {proc.returncode}); see {log_path}:\n" + "\n".join(tail))
    return proc.stdout.decode("utf-8", errors="replace")


class Stack:
    """The processes this run started, each in its own session so that one
    signal reaches its children (gunicorn and Celery workers) too."""

    def __init__(self, env: dict[str, str], config: StackConfig) -> None:
        self.env = env
        self.log_dir = config.log_dir
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []
        self._logs: list[IO[bytes]] = []

    def start(self, name: str, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        log_file = (self.log_dir / f"{name}.log").open("ab")
        self._logs.append(log_file)
        proc = subprocess.Popen(list(argv), cwd=REPO_ROOT, env=self.env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append((name, proc))
        return proc

    def check_alive(self) -> None:
        for name, proc in self.procs:
            if proc.poll() is not None:
                raise SystemExit(f"{name} exited early (code {proc.returncode}); see {self.log_dir / (name + '.log')}")

    def stop(self) -> None:
        """Stop newest first (web, worker, Redis), one at a time: SIGTERM to the
        main process only, so gunicorn and Celery shut down warm (Celery
        finishes the jobs it holds and acks them to a Redis still running);
        SIGKILL to the whole group when it overstays its grace."""
        for name, proc in reversed(self.procs):
            if proc.poll() is None:
                grace = STOP_GRACE_S.get(name, 30.0)
                _log(f"stopping {name} (pid {proc.pid}; up to {grace:.0f} s)")
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=grace)
                except subprocess.TimeoutExpired:
                    _log(f"{name} did not stop in {grace:.0f} s; killing it")
            # Whatever is left of its group (children of a killed parent included).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        self.procs.clear()
        for log_file in self._logs:
            log_file.close()
        self._logs.clear()


def wait_for(what: str, probe: Any, stack: Stack, timeout_s: float = HEALTH_WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        stack.check_alive()
        if probe():
            return
        time.sleep(0.5)
    raise SystemExit(f"{what} did not come up within {timeout_s:.0f} s; see {stack.log_dir}")


def redis_up(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def prepare(config: StackConfig, env: dict[str, str]) -> str:
    """A fresh database and work dir, the sandbox image, the catalog and the accounts."""
    for port in (config.web_port, config.redis_port):
        if not port_is_free(port):
            raise SystemExit(f"port {port} on 127.0.0.1 is in use; is another load test running? (LOADTEST_WEB_PORT / LOADTEST_REDIS_PORT)")
    if config.work_dir.exists():
        shutil.rmtree(config.work_dir)
    (config.work_dir / "redis").mkdir(parents=True)
    config.log_dir.mkdir()
    python = str(VENV_BIN / "python")
    output = run_step(config, "ensuring the sandbox image (python -m sandbox.build)", [python, "-m", "sandbox.build"], env, "prepare.log")
    tag = output.strip().splitlines()[-1].strip()
    if not tag:
        raise SystemExit(f"python -m sandbox.build printed no tag; see {config.log_dir / 'prepare.log'}")
    # Pinned for the whole run: a harness edited meanwhile must not switch images under the worker.
    env["SANDBOX_IMAGE"] = env.get("SANDBOX_IMAGE") or tag
    if env["DATABASE_URL"].startswith(("postgres://", "postgresql://")) and config.database == "postgres":
        _log(f"recreating the PostgreSQL database {POSTGRES_DATABASE}")
        recreate_postgres_database(env["DATABASE_URL"])
    run_step(config, "migrating a fresh database", [python, "manage.py", "migrate", "--noinput"], env, "prepare.log")
    run_step(config, "loading the catalog", [python, "manage.py", "load_exercises"], env, "prepare.log")
    run_step(config, "collecting static files", [python, "manage.py", "collectstatic", "--noinput"], env, "prepare.log")
    run_step(config, f"creating {config.users} learner accounts", [python, "-m", "bench.stack", "--create-learners", str(config.users)], env, "prepare.log")
    return env["SANDBOX_IMAGE"]


def start(stack: Stack, config: StackConfig) -> None:
    """Redis, then the worker (with beat), then the web server; returns once Redis and the web answer."""
    bin_dir = VENV_BIN
    stack.start(
        "redis",
        ["redis-server", "--port", str(config.redis_port), "--bind", "127.0.0.1", "--dir", str(config.work_dir / "redis"), "--save", "", "--appendonly", "no"],
    )
    wait_for("Redis", lambda: redis_up(config.redis_port), stack)
    stack.start(
        "worker",
        [
            str(bin_dir / "celery"), "-A", "config", "worker", "-Q", "run,submit,maintenance", "-c", str(config.worker_concurrency),
            "-B", "-s", str(config.work_dir / "celerybeat-schedule"), "-n", f"{config.work_dir.name}@{socket.gethostname()}", "-l", "INFO",
        ],
    )  # fmt: skip
    stack.start(
        "web",
        [
            str(bin_dir / "gunicorn"), "config.wsgi", "--pythonpath", "platform", "--bind", f"127.0.0.1:{config.web_port}",
            "--worker-class", "gthread", "--workers", str(config.web_workers), "--threads", str(config.web_threads),
            "--timeout", "120", "--access-logfile", str(config.log_dir / "access.log"),
        ],
    )  # fmt: skip
    wait_for("the web server", lambda: http_ok(f"{config.host}/healthz"), stack)


def create_learners(count: int) -> None:
    """``count`` learner accounts sharing one password hash (hashing 200
    passwords one by one would take minutes on a small machine)."""
    import django

    django.setup()
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User

    password = make_password(PASSWORD)
    names = [f"{USER_PREFIX}{n:04d}" for n in range(1, count + 1)]
    existing = set(User.objects.filter(username__in=names).values_list("username", flat=True))
    User.objects.bulk_create([User(username=name, password=password) for name in names if name not in existing])
    print(f"{count} learner accounts ready ({USER_PREFIX}0001 .. {names[-1] if names else '-'})")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.stack")
    parser.add_argument("--create-learners", type=int, metavar="N", required=True)
    create_learners(parser.parse_args(argv).create_learners)
    return 0


if __name__ == "__main__":
    sys.exit(main())
