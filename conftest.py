"""Shared fixtures: real Redis, a real Celery worker process, the sandbox image,
the personas (a learner, another learner, an instructor, another instructor,
a staff admin, and logged-in clients of the learners) and the KV-cache rung.

Tests that need a service are marked (``redis``, ``docker``, ``worker``,
``browser``) so they can be selected or skipped with ``-m``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

ROOT = Path(__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """A project-owned Redis on its own port and data dir; can be restarted."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed (make test installs it; or apt-get install redis-server)")
        self.binary = binary
        self.port = _free_port()
        self.data_dir = tempfile.mkdtemp(prefix="dojo-redis-")
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        # No persistence: a restart loses every queued message, which is
        # exactly the fault the sweeper must recover from.
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.data_dir, "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    self.process.kill()
                    pytest.fail("Redis did not start")
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    from django.conf import settings

    from config.celery import app

    app.conf.update(broker_url=server.url, result_backend=server.url)
    settings.REDIS_URL = server.url  # live-update events go to this Redis too
    # Login sessions too (frontend/sessions.py): a cache connection made from
    # the old settings is dropped, as override_settings would.
    from django.core.signals import setting_changed

    if settings.CACHES["sessions"]["BACKEND"].endswith("RedisCache"):
        settings.CACHES["sessions"] = {**settings.CACHES["sessions"], "LOCATION": server.url}
        setting_changed.send(sender=None, setting="CACHES", value=settings.CACHES, enter=True)
    yield server
    server.stop()
    shutil.rmtree(server.data_dir, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def _celery_uses_the_test_redis(redis_server: RedisServer) -> None:
    """Point Celery at the test Redis before any test runs.

    NOTE: the app caches its result backend and connection pool on first use
    (an eager task does it): configured later, they would keep talking to
    the default Redis, and every worker test after would fail.
    """


@pytest.fixture(scope="session")
def redis_url(redis_server: RedisServer) -> str:
    return redis_server.url


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    """The sandbox image for this checkout, built if missing."""
    from sandbox.build import ensure_image

    return ensure_image()


class WorkerProcess:
    """A real Celery worker process (its own process group, so it can be killed whole)."""

    def __init__(self, env: dict[str, str], name: str, beat: bool, queues: str = "run,submit,maintenance") -> None:
        self.env = env
        self.name = name
        self.beat = beat
        self.queues = queues
        self.process: subprocess.Popen[bytes] | None = None
        # Its log and beat schedule, in one folder that ``remove_files`` deletes:
        # left behind, every test run added two entries to the system's
        # temporary folder (1,560 after a month, which slowed every pytest
        # collecting beside them there: bench.bench's floor).
        self.folder = Path(tempfile.mkdtemp(prefix="dojo-worker-"))
        self.log_path = self.folder / "worker.log"
        self.log_path.touch()
        self.schedule = self.folder / "beat-schedule"

    def start(self, wait: bool = True, **extra_env: str) -> WorkerProcess:
        command = [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", self.queues, "-c", "2", "--pool", "prefork",
                   "-n", self.name, "-l", "INFO", "--without-gossip", "--without-mingle"]
        if self.beat:
            command += ["-B", "-s", str(self.schedule)]
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(command, cwd=ROOT, env={**self.env, **extra_env}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self) -> None:
        from grader.tasks import ping_task

        try:
            ping_task.apply_async(queue=self.queues.split(",")[0]).get(timeout=60)
        except Exception:  # noqa: BLE001 - any failure to answer means no worker
            self.kill()
            pytest.fail(f"the Celery worker did not answer; log:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def kill(self) -> None:
        """SIGKILL the whole worker (main process and pool children), as a crash would."""
        if self.process is not None:
            try:
                os.killpg(self.process.pid, 9)
            except ProcessLookupError:
                pass
            self.process.wait(10)
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                pass
            self.kill()

    def remove_files(self) -> None:
        """Delete its log and beat schedule (once the test that used them is over)."""
        shutil.rmtree(self.folder, ignore_errors=True)


def database_url(database: dict[str, Any]) -> str:
    """The ``DATABASE_URL`` of a ``DATABASES`` entry: once the test database is
    set up, its NAME is the test database's, which worker processes must share."""
    if database["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{database['NAME']}"
    if database["ENGINE"] != "django.db.backends.postgresql":
        raise ValueError(f"no DATABASE_URL for the engine {database['ENGINE']}")
    user = quote(str(database.get("USER") or ""), safe="")
    password = quote(str(database.get("PASSWORD") or ""), safe="")
    credentials = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    port = f":{database['PORT']}" if database.get("PORT") else ""
    return f"postgres://{credentials}{database.get('HOST') or ''}{port}/{quote(str(database['NAME']), safe='')}"


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: Any, django_db_blocker: Any) -> Iterator[None]:
    """pytest-django's test database, and on PostgreSQL, before it is dropped,
    the end of every other connection to it: a live-server or stream thread
    still connected at the end of the session would otherwise make the DROP
    fail ("being accessed by other users") and leave the database behind."""
    yield
    from django.db import connection

    if connection.vendor == "postgresql":
        with django_db_blocker.unblock(), connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")


def _worker_env(database: dict[str, Any], redis_url: str, sandbox_image: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'platform'}",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url(database),
        "REDIS_URL": redis_url,
        "SANDBOX_IMAGE": sandbox_image,
        "SECRET_KEY": "test-worker",
        # One warm container per worker process: enough to exercise the pool,
        # light enough for a two-core test machine starting workers often.
        "SANDBOX_POOL_SIZE": "1",
        # And started at a process's first job, not when it starts: most tests
        # grade a job or two, and warming both processes' pools at start-up
        # would cost a container's torch import (seconds of CPU) for nothing.
        # grader/tests/test_pool_at_start.py checks the production default.
        "SANDBOX_POOL_WARM_AT_START": "0",
    }


class _Workers:
    """The worker processes one factory made; ``stop_all`` stops them and removes their files."""

    def __init__(self) -> None:
        self.made: list[WorkerProcess] = []

    def keep(self, worker: WorkerProcess) -> WorkerProcess:
        self.made.append(worker)
        return worker

    def stop_all(self) -> None:
        for worker in self.made:
            worker.stop()
            worker.remove_files()


@pytest.fixture
def worker_factory(transactional_db: Any, redis_url: str, sandbox_image: str, settings: Any) -> Iterator[Any]:
    """Makes real Celery worker processes against the test database; stops them after."""
    env = _worker_env(settings.DATABASES["default"], redis_url, sandbox_image)
    workers = _Workers()

    def make(name: str = "worker@test", beat: bool = False, queues: str = "run,submit,maintenance") -> WorkerProcess:
        return workers.keep(WorkerProcess(env, name, beat, queues))

    yield make
    workers.stop_all()


@pytest.fixture(scope="module")
def module_worker_factory(django_db_setup: Any, redis_url: str, sandbox_image: str) -> Iterator[Any]:
    """Like ``worker_factory``, but its workers serve every test of a module:
    a worker process keeps no state between jobs, and starting one per test
    costs seconds. The tests using one still need ``transactional_db``."""
    from django.conf import settings

    env = _worker_env(settings.DATABASES["default"], redis_url, sandbox_image)
    workers = _Workers()

    def make(name: str = "worker@module", **extra_env: str) -> WorkerProcess:
        return workers.keep(WorkerProcess(env, name, beat=False).start(True, **extra_env))

    yield make
    workers.stop_all()


@pytest.fixture
def worker(worker_factory: Any) -> WorkerProcess:
    """A real Celery worker process consuming the run and submit queues."""
    started: WorkerProcess = worker_factory().start()
    return started


# The personas, one of each, shared by every app's tests (browser tests log in with these passwords).
@pytest.fixture
def learner(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="lena", password="learner-pass-123")


@pytest.fixture
def other_learner(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="omar", password="learner-pass-456")


def _instructor(django_user_model: Any, username: str) -> Any:
    from core.roles import make_instructor

    user = django_user_model.objects.create_user(username=username, password="instructor-pass-123")
    make_instructor(user)
    return user


@pytest.fixture
def instructor(django_user_model: Any) -> Any:
    """A member of the instructors group (owns no module until a test gives it one)."""
    return _instructor(django_user_model, "ines")


@pytest.fixture
def other_instructor(django_user_model: Any) -> Any:
    return _instructor(django_user_model, "ivan")


@pytest.fixture
def admin_user(django_user_model: Any) -> Any:
    return django_user_model.objects.create_superuser(username="ada", password="admin-pass-789")


@pytest.fixture
def learner_client(learner: Any) -> Any:
    """A test client logged in as the learner (a client of its own: ``client`` stays anonymous)."""
    from django.test import Client

    client = Client()
    client.force_login(learner)
    return client


@pytest.fixture
def other_learner_client(other_learner: Any) -> Any:
    from django.test import Client

    client = Client()
    client.force_login(other_learner)
    return client


@pytest.fixture
def catalog(db: Any, settings: Any) -> Any:
    """The shipped catalog, loaded into the test database."""
    from exercises.services import sync_catalog

    return sync_catalog(settings.EXERCISES_DIR)


@pytest.fixture
def kv_rung(catalog: Any) -> Any:
    """The shipped catalog's first rung (kv-cache-size), with its current version."""
    from exercises.models import Rung

    return Rung.objects.select_related("current_version").get(slug="kv-cache-size")


@pytest.fixture
def enqueued(monkeypatch: Any) -> list[tuple[str, int, str]]:
    """Catches what ``grader.lifecycle`` would send to the broker: (kind, pk, queue)."""
    from grader import lifecycle

    sent: list[tuple[str, int, str]] = []
    monkeypatch.setattr(lifecycle, "enqueue", lambda kind, pk, queue: sent.append((kind.label, pk, queue)))
    return sent


def _all_at_once(count: int, request: Any) -> list[Any]:
    import threading

    from django.db import connection

    barrier = threading.Barrier(count)
    answers: list[Any] = [None] * count

    def send(index: int) -> None:
        try:
            barrier.wait()
            answers[index] = request(index)
        except Exception as exc:  # noqa: BLE001 - a refusal is an answer too
            answers[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


@pytest.fixture
def all_at_once(transactional_db: Any) -> Any:
    """``all_at_once(count, request)``: call ``request(index)`` from ``count``
    threads released together, each on its own database connection; their
    answers (or what they raised), in index order. For races between one
    learner's parallel requests."""
    return _all_at_once


@pytest.fixture
def warm_grading_pool(settings: Any) -> Iterator[None]:
    """Grade in this process as a worker does: two warm containers, each
    reused for several jobs (for tests that grade dozens of jobs, such as
    ``validate_exercises`` over every rung); removed at the end."""
    from core.runners import close_runners

    settings.SANDBOX_POOL_SIZE = 2
    try:
        yield
    finally:
        close_runners()


@pytest.fixture(autouse=True)
def _plain_static_storage(settings: Any) -> None:
    """Tests render templates without running collectstatic first, and grade
    in-process without a pool of pre-started containers (worker processes
    started by the tests keep theirs)."""
    settings.SANDBOX_POOL_SIZE = 0
    Path(settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
