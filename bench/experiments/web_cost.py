"""What one request costs the web server, with and without persistent database connections, in one run.

Usage (from the repository root)::

    .venv/bin/python -m bench.experiments.web_cost

Two copies of the bench's stack (``bench.stack``: gunicorn 2 x 16 threads,
a Celery worker, Redis, each on its own fresh SQLite database, or
``DATABASE_URL``) run side by side: ``persistent`` with the settings'
default ``DATABASE_CONN_MAX_AGE`` (60 s), ``per_request`` with
``DATABASE_CONN_MAX_AGE=0`` (a connection opened and closed by every
request, SQLite's default until this bench). On each, one learner logs in
and Runs the KV-cache rung's reference once. Then, in batches of
``WEB_COST_BATCH`` (50) requests sent one after the other, the sides taking
turns batch by batch so that a machine whose speed drifts moves both alike,
each side is asked ``WEB_COST_POLLS`` (1,200) times for:

- its finished Run's state: what a waiting page polls, the request a busy
  class sends most;
- the module page (a third as many);
- ``/healthz``, which reads no database: the server's own floor (a third
  as many).

It prints, per side, the web server's CPU milliseconds per request
(gunicorn's master and workers, from /proc) and the wall time per request,
with persistent / per_request ratios; written to bench/experiments/web-cost-results.json.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from bench.cpu_split import stat_cpu_s

REPO_ROOT = Path(__file__).resolve().parents[2]


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of ``pid`` and its live children (gunicorn's workers)."""
    total = 0.0
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as handle:
            children = [int(child) for child in handle.read().split()]
    except OSError:
        children = []
    for each in (pid, *children):
        try:
            with open(f"/proc/{each}/stat", encoding="ascii", errors="replace") as handle:
                total += stat_cpu_s(handle.read())
        except OSError:
            continue
    return total


class Side:
    """One stack, its learner and what its requests cost so far."""

    def __init__(self, name: str, config: Any, env: dict[str, str]) -> None:
        from bench.stack import Stack

        self.name = name
        self.config = config
        self.stack = Stack(env, config)
        self.cpu_s: dict[str, float] = {}
        self.wall_s: dict[str, float] = {}
        self.count: dict[str, int] = {}

    def start(self) -> None:
        from bench import stack as stack_mod
        from bench.bench import Learner
        from bench.rungs import RUNGS
        from bench.stack import USER_PREFIX

        stack_mod.start(self.stack, self.config)
        self.web_pid = dict(self.stack.procs)["web"].pid
        self.learner = Learner(self.config.host, f"{USER_PREFIX}0001")
        _, state = self.learner.timed("kv-cache-size", "run", (RUNGS["kv-cache-size"] / "reference.py").read_text())
        if state.get("outcome") != "passed":
            raise RuntimeError(f"the reference did not pass: {state}")
        host = self.config.host
        self.urls = {
            "state": f"{host}/submissions/{state['id']}/state",
            "module_page": f"{host}/modules/inference-and-serving/",
            "healthz": f"{host}/healthz",
        }
        for _ in range(50):  # every thread's first request, imports and caches warm
            self.fetch("state")

    def fetch(self, what: str) -> None:
        self.learner.http.get(self.urls[what], timeout=30).raise_for_status()

    def batch(self, what: str, count: int) -> None:
        cpu_before = tree_cpu_s(self.web_pid)
        started = time.perf_counter()
        for _ in range(count):
            self.fetch(what)
        self.wall_s[what] = self.wall_s.get(what, 0.0) + time.perf_counter() - started
        self.cpu_s[what] = self.cpu_s.get(what, 0.0) + tree_cpu_s(self.web_pid) - cpu_before
        self.count[what] = self.count.get(what, 0) + count

    def figures(self) -> dict[str, float]:
        found = {}
        for what, count in self.count.items():
            found[f"{self.name}_{what}_cpu_ms"] = round(self.cpu_s[what] / count * 1000, 2)
            found[f"{self.name}_{what}_wall_ms"] = round(self.wall_s[what] / count * 1000, 2)
        return found


def main() -> int:
    sys.path[:0] = [str(REPO_ROOT), str(REPO_ROOT / "platform")]
    from bench import stack as stack_mod
    from bench.ab import report
    from bench.bench import burst_env
    from bench.stack import StackConfig

    polls = int(os.environ.get("WEB_COST_POLLS", "1200"))
    batch = int(os.environ.get("WEB_COST_BATCH", "50"))
    sides = []
    for number, (name, conn_max_age) in enumerate((("persistent", None), ("per_request", "0"))):
        config = StackConfig(
            work_dir=REPO_ROOT / "var" / f"web-cost-{name}", users=1, web_port=8210 + number, redis_port=6398 + number,
            web_workers=2, web_threads=16, worker_concurrency=2,
        )  # fmt: skip
        env = {key: value for key, value in burst_env(config).items() if key != "DATABASE_CONN_MAX_AGE"}
        if conn_max_age is not None:
            env["DATABASE_CONN_MAX_AGE"] = conn_max_age
        stack_mod.prepare(config, env)
        sides.append(Side(name, config, env))
    try:
        for side in sides:
            side.start()
        for what, total in (("state", polls), ("module_page", max(batch, polls // 3)), ("healthz", max(batch, polls // 3))):
            for number in range(max(1, total // batch)):
                for side in sides if number % 2 == 0 else sides[::-1]:
                    side.batch(what, batch)
            print(
                f"[web-cost] {what}: "
                + ", ".join(f"{side.name} {side.cpu_s[what] / side.count[what] * 1000:.2f} ms CPU" for side in sides),
                flush=True,
            )
    finally:
        for side in sides:
            side.stack.stop()
    found: dict[str, Any] = {
        "database": sides[0].stack.env.get("DATABASE_URL", "sqlite").split(":", 1)[0],
        "requests_per_side": polls,
        "batch": batch,
    }
    for side in sides:
        found.update(side.figures())
    for key in ("state_cpu_ms", "state_wall_ms", "module_page_cpu_ms", "healthz_cpu_ms"):
        found[f"persistent_vs_per_request_{key}"] = round(found[f"persistent_{key}"] / found[f"per_request_{key}"], 2)
    report(found, REPO_ROOT / "bench" / "experiments" / "web-cost-results.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
