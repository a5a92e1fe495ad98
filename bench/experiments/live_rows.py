"""What batching a running job's live test rows (GRADER_LIVE_ROWS_EVERY_S) saves, in one run.

Usage (from the repository root)::

    .venv/bin/python -m bench.experiments.live_rows

The worker's side of a Submit, without the sandbox: ``grade_submission``
on a fresh SQLite database (PostgreSQL with BENCH_LIVE_DATABASE_URL), with
a project-owned Redis (port 6397), and a scripted runner that reports 20
tests 5 ms apart, then the re-run's start, then the final result (as the
KV rung's Submit does). Two sides take turns, 3 rounds of 30 Submits each:
every test written and announced as it ends (``0``) and the default
batching (``0.25`` s). A subscriber counts the "changed" hints, each of
which makes a page that follows the job over server-sent events fetch its
state again. Printed, per Submit: the worker's CPU, its database queries,
the hints, with batched / per-test ratios; written to
bench/experiments/live-rows-results.json.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
TESTS_PER_SUBMIT = 20
TEST_GAP_S = 0.005
SUBMITS = 30
ROUNDS = 3
REDIS_PORT = int(os.environ.get("BENCH_LIVE_REDIS_PORT", "6397"))


class ScriptedRunner:
    """Reports a Submit's tests as the harness does, then its final result."""

    def run(self, job: Any, on_event: Any = None) -> Any:
        from sandbox.jobs import CaseResult
        from sandbox.testing import job_result

        names = [f"test_case_{number:02d}" for number in range(TESTS_PER_SUBMIT)]
        on_event("container", {"id": "scripted"})
        on_event("running", {})
        for name in names:
            time.sleep(TEST_GAP_S)
            on_event("test", {"name": name, "outcome": "passed", "duration_s": TEST_GAP_S, "message": ""})
        on_event("rerun", {})
        time.sleep(TEST_GAP_S * TESTS_PER_SUBMIT)
        return job_result("passed", [CaseResult(name=name, outcome="passed") for name in names])

    def stop(self, container_id: str) -> None:
        pass


def _setup(work: Path) -> Any:
    sys.path[:0] = [str(REPO_ROOT), str(REPO_ROOT / "platform")]
    os.environ.setdefault("SECRET_KEY", "bench-live-rows")
    os.environ["DATABASE_URL"] = os.environ.get("BENCH_LIVE_DATABASE_URL") or f"sqlite:///{work / 'db.sqlite3'}"
    os.environ["REDIS_URL"] = f"redis://127.0.0.1:{REDIS_PORT}/0"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.contrib.auth import get_user_model

    from exercises.services import sync_catalog

    sync_catalog(REPO_ROOT / "exercises")
    user, _ = get_user_model().objects.get_or_create(username="bench-live")
    return user


def _listen(counter: dict[str, int], stop: threading.Event) -> None:
    import redis

    pubsub = redis.Redis(port=REDIS_PORT).pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
    pubsub.psubscribe("*")
    while not stop.is_set():
        if pubsub.get_message(timeout=0.1) is not None:
            counter["hints"] += 1
    pubsub.close()


def _side(user: Any, every_s: float) -> dict[str, float]:
    from django.conf import settings
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from exercises.models import Rung
    from grader import services
    from grader.models import Submission

    settings.GRADER_LIVE_ROWS_EVERY_S = every_s
    settings.GRADER_RATE_LIMIT_PER_MIN = 10**6
    rung = Rung.objects.get(slug="kv-cache-size")
    counter = {"hints": 0}
    stop = threading.Event()
    listener = threading.Thread(target=_listen, args=(counter, stop), daemon=True)
    listener.start()
    time.sleep(0.3)
    cpu = 0.0
    queries = 0
    for _ in range(SUBMITS):
        Submission.objects.filter(user=user).delete()
        submission = services.submit_solution(user=user, rung=rung, kind="submit", code="x = 1\n")
        # The worker's own time only: the runner's sleeps are the sandbox's.
        before = time.thread_time()
        with CaptureQueriesContext(connection) as captured:
            services.grade_submission(submission.pk, runner=ScriptedRunner())
        cpu += time.thread_time() - before
        queries += len(captured.captured_queries)
        assert Submission.objects.get(pk=submission.pk).test_results.count() == TESTS_PER_SUBMIT
    time.sleep(0.3)
    stop.set()
    listener.join()
    return {"cpu_ms": cpu / SUBMITS * 1000, "queries": queries / SUBMITS, "hints": counter["hints"] / SUBMITS}


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="bench-live-rows-"))
    redis_dir = work / "redis"
    redis_dir.mkdir()
    server = subprocess.Popen(
        ["redis-server", "--port", str(REDIS_PORT), "--bind", "127.0.0.1", "--dir", str(redis_dir), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        user = _setup(work)
        sides = {"per_test": 0.0, "batched": 0.25}
        rounds: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
        for number in range(ROUNDS):
            for name in list(sides) if number % 2 == 0 else list(sides)[::-1]:
                rounds[name].append(_side(user, sides[name]))
                print(f"[live-rows] round {number + 1} {name}: {rounds[name][-1]}", flush=True)
        found: dict[str, Any] = {"tests_per_submit": TESTS_PER_SUBMIT, "submits_per_round": SUBMITS, "rounds": ROUNDS,
                                 "database": "postgresql" if os.environ.get("BENCH_LIVE_DATABASE_URL") else "sqlite"}
        for name in sides:
            for key in ("cpu_ms", "queries", "hints"):
                found[f"{name}_{key}_per_submit"] = round(statistics.median(r[key] for r in rounds[name]), 2)
        for key in ("cpu_ms", "queries", "hints"):
            found[f"batched_vs_per_test_{key}"] = round(found[f"batched_{key}_per_submit"] / found[f"per_test_{key}_per_submit"], 2)
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)
    for key, value in found.items():
        print(f"  {key.ljust(40)} {value}")
    path = REPO_ROOT / "bench" / "experiments" / "live-rows-results.json"
    path.write_text(json.dumps(found, indent=2) + "\n")
    print(f"  written to bench/{path.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
