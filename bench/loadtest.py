"""`make loadtest`: a throw-away stack, Locust learners against it, a report.

Usage (from the repository root)::

    .venv/bin/python -m bench.loadtest

By default it is a **capacity search**: learners in steps
(``LOADTEST_STAGES``, 20, 40, ... 120 learners for a minute each), then 200
learners for five minutes. Each step (after its first ``LOADTEST_SETTLE_S``
seconds) is judged on what a learner feels: busy refusals at most 5 % of
Run/Submit requests and a result wait (send to result) p95 of at most 10 s;
the report names the most learners that held both (issue 15 asks for at
least 60 on a 2-core machine). The last, overloaded step must still end
with no 5xx, nothing lost, and a Retry-After on every refusal.

It starts its own stack on ports that do not clash with ``make run``: Redis
(own data dir), a Celery worker with beat, and gunicorn serving the platform
with DEBUG off, on a fresh SQLite database under ``var/loadtest/``. It
migrates, loads the catalog, collects static files, creates the learner
accounts in bulk and makes sure the sandbox image exists. Then it runs
``bench/locustfile.py`` headless, waits for the submissions still in flight,
stops everything it started (also on Ctrl-C or a failure) and prints a report,
also written to ``bench/loadtest-results.json`` (``loadtest-results-postgres.json``
with ``LOADTEST_DATABASE=postgres``).

Configuration, all from the environment:

=========================== ======= =========================================
LOADTEST_STAGES             search  ``users:seconds`` steps, e.g. ``20:60,60:120``
LOADTEST_USERS              -       with LOADTEST_DURATION: one step instead
LOADTEST_DURATION           -       that step's length (e.g. ``30s``, ``5m``)
LOADTEST_SETTLE_S           20      seconds of each step left out of its figures
LOADTEST_SPAWN_RATE         10      learners started per second
LOADTEST_DRAIN_S            120     how long to wait for submissions in flight
LOADTEST_WEB_PORT           8100    gunicorn, on 127.0.0.1
LOADTEST_REDIS_PORT         6395    Redis, on 127.0.0.1
LOADTEST_WEB_WORKERS        2       gunicorn worker processes
LOADTEST_WEB_THREADS        32      threads per gunicorn worker (gthread)
LOADTEST_WORKER_CONCURRENCY 2       Celery worker processes (queues run, submit)
LOADTEST_SSE_SHARE          0       learners that follow results on the event stream
LOADTEST_POLL_MAX_S         120     a learner's wait for a result before giving up
LOADTEST_DATABASE           sqlite  ``sqlite`` or ``postgres`` (see below)
=========================== ======= =========================================

Any platform setting (``GRADER_MAX_QUEUED``, ``DATABASE_URL``, ...) set in the
environment reaches the stack unchanged; ``DATABASE_URL`` defaults to
``var/loadtest/db.sqlite3``, recreated on every run, or with
``LOADTEST_DATABASE=postgres`` to the database ``dojo_loadtest`` on the
project's PostgreSQL cluster (``scripts/postgres.sh``, started if needed),
also recreated on every run.

The stack itself (processes, preparation, accounts) is ``bench/stack.py``,
shared with ``make bench``.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.cpu_split import CpuSampler
from bench.stack import PASSWORD, REPO_ROOT, USER_PREFIX, VENV_BIN, Stack, StackConfig, prepare, stack_env, start

WORK_DIR = REPO_ROOT / "var" / "loadtest"
LOG_DIR = WORK_DIR / "log"
RESULTS_PATH = REPO_ROOT / "bench" / "loadtest-results.json"
RESULTS_PATH_POSTGRES = REPO_ROOT / "bench" / "loadtest-results-postgres.json"
LOCUSTFILE = REPO_ROOT / "bench" / "locustfile.py"

# Locust runs for its duration, then this long at most to stop its users.
LOCUST_GRACE_S = 120.0
# The capacity search: steps of learners, a minute each, then the overload step.
DEFAULT_STAGES = "20:60,40:60,60:60,80:60,100:60,120:60,200:300"
# What a learner accepts, in a step that "serves" its learners (issue 15).
MAX_BUSY_SHARE = 0.05
MAX_WAIT_P95_S = 10.0
TARGET_CAPACITY = 60


def _log(message: str) -> None:
    print(f"[loadtest] {message}", flush=True)


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SystemExit(f"{name}={raw!r} is not a whole number") from None
    if value <= 0:
        raise SystemExit(f"{name}={raw!r} must be positive")
    return value


def _duration_s(text: str) -> float:
    """Locust's ``-t`` syntax: ``90``, ``30s``, ``5m``, ``1h30m``."""
    total, number = 0.0, ""
    for char in text.strip():
        if char.isdigit():
            number += char
        elif char in "hms" and number:
            total += int(number) * {"h": 3600, "m": 60, "s": 1}[char]
            number = ""
        else:
            raise SystemExit(f"LOADTEST_DURATION={text!r} is not a duration like 30s, 5m or 1h30m")
    if number:
        total += int(number)
    if total <= 0:
        raise SystemExit(f"LOADTEST_DURATION={text!r} must be positive")
    return total


def parse_stages(text: str) -> list[tuple[int, int]]:
    """``"20:60,40:60"`` -> [(20, 60), (40, 60)]: learners and seconds per step."""
    stages = []
    for part in text.split(","):
        users, _, seconds = part.strip().partition(":")
        try:
            stage = (int(users), int(_duration_s(seconds)))
        except ValueError:
            raise SystemExit(f"LOADTEST_STAGES={text!r}: each step is learners:seconds, e.g. 20:60") from None
        if stage[0] <= 0:
            raise SystemExit(f"LOADTEST_STAGES={text!r}: learners must be positive")
        stages.append(stage)
    return stages


@dataclass(frozen=True)
class Config:
    users: int
    spawn_rate: int
    duration: str
    stages: tuple[tuple[int, int], ...]
    settle_s: int
    drain_s: int
    web_port: int
    redis_port: int
    web_workers: int
    web_threads: int
    worker_concurrency: int
    database: str

    @classmethod
    def from_env(cls) -> Config:
        if os.environ.get("LOADTEST_STAGES"):
            stages = parse_stages(os.environ["LOADTEST_STAGES"])
        elif os.environ.get("LOADTEST_USERS") or os.environ.get("LOADTEST_DURATION"):
            stages = [(_env_int("LOADTEST_USERS", 200), int(_duration_s(os.environ.get("LOADTEST_DURATION", "5m"))))]
        else:
            stages = parse_stages(DEFAULT_STAGES)
        duration = f"{sum(seconds for _, seconds in stages)}s"
        database = os.environ.get("LOADTEST_DATABASE", "") or "sqlite"
        if database not in ("sqlite", "postgres"):
            raise SystemExit(f"LOADTEST_DATABASE={database!r} must be sqlite or postgres")
        return cls(
            users=max(users for users, _ in stages),
            spawn_rate=_env_int("LOADTEST_SPAWN_RATE", 10),
            duration=duration,
            stages=tuple(stages),
            settle_s=_env_int("LOADTEST_SETTLE_S", 20),
            drain_s=_env_int("LOADTEST_DRAIN_S", 120),
            web_port=_env_int("LOADTEST_WEB_PORT", 8100),
            redis_port=_env_int("LOADTEST_REDIS_PORT", 6395),
            web_workers=_env_int("LOADTEST_WEB_WORKERS", 2),
            web_threads=_env_int("LOADTEST_WEB_THREADS", 32),
            worker_concurrency=_env_int("LOADTEST_WORKER_CONCURRENCY", 2),
            database=database,
        )

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    @property
    def stack(self) -> StackConfig:
        return StackConfig(
            work_dir=WORK_DIR, web_port=self.web_port, redis_port=self.redis_port, web_workers=self.web_workers,
            web_threads=self.web_threads, worker_concurrency=self.worker_concurrency, users=self.users, database=self.database,
        )


# ---- the stack ------------------------------------------------------------------


# ---- the run and the figures ------------------------------------------------------


def _run_locust(config: Config, env: dict[str, str]) -> int:
    locust_env = dict(env)
    locust_env.update(
        {
            "LOADTEST_COUNTS_PATH": str(WORK_DIR / "learner-counts.json"), "LOADTEST_USER_PREFIX": USER_PREFIX, "LOADTEST_PASSWORD": PASSWORD,
            "LOADTEST_STAGES": ",".join(f"{users}:{seconds}" for users, seconds in config.stages), "LOADTEST_SPAWN_RATE": str(config.spawn_rate),
        }
    )  # fmt: skip
    argv = [
        str(VENV_BIN / "locust"), "-f", str(LOCUSTFILE), "--headless", "-u", str(config.users), "-r", str(config.spawn_rate),
        "-t", config.duration, "--host", config.host, "--csv", str(WORK_DIR / "locust"), "--only-summary", "--loglevel", "WARNING",
    ]  # fmt: skip
    steps = ", ".join(f"{users} for {seconds} s" for users, seconds in config.stages)
    _log(f"locust: learners in steps ({steps}), spawn rate {config.spawn_rate}/s, against {config.host}")
    with (LOG_DIR / "locust.log").open("ab") as log_file:
        proc = subprocess.Popen(argv, cwd=REPO_ROOT, env=locust_env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return proc.wait(timeout=_duration_s(config.duration) + LOCUST_GRACE_S)
        except subprocess.TimeoutExpired:
            _log("locust overran its duration; stopping it")
            os.killpg(proc.pid, signal.SIGINT)
            return proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _setup_django(env: dict[str, str]) -> None:
    for key in ("DJANGO_SETTINGS_MODULE", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "STATIC_ROOT", "REDIS_URL", "DATABASE_URL", "SANDBOX_IMAGE"):
        if key in env:
            os.environ[key] = env[key]
    for path in (str(REPO_ROOT), str(REPO_ROOT / "platform")):
        if path not in sys.path:
            sys.path.insert(0, path)
    import django

    django.setup()


def _in_flight() -> int:
    from grader.constants import Status
    from grader.models import Submission

    return Submission.objects.filter(status__in=[Status.QUEUED, Status.RUNNING]).count()


def _drain(config: Config, stack: Stack) -> float:
    """Wait (bounded) until no submission is queued or running; seconds waited."""
    start = time.monotonic()
    deadline = start + config.drain_s
    left = _in_flight()
    if left:
        _log(f"waiting up to {config.drain_s} s for {left} submissions in flight")
    while left and time.monotonic() < deadline:
        stack.check_alive()
        time.sleep(2)
        left = _in_flight()
    return round(time.monotonic() - start, 1)


def _percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * share))], 2)


def submission_figures() -> dict[str, Any]:
    """What the database says about every submission of this run."""
    from grader.constants import Outcome, Status
    from grader.models import Submission

    reference_code = (REPO_ROOT / "exercises/llm-systems-frontier/inference-and-serving/rungs/01-kv-cache-size/reference.py").read_text(encoding="utf-8")
    rows = list(Submission.objects.values("kind", "status", "outcome", "code", "enqueued_at", "started_at", "finished_at", "timings", "attempts"))
    by_outcome: dict[str, int] = {}
    reference_not_passed: dict[str, int] = {}
    queue_waits: list[float] = []
    run_times: list[float] = []
    for row in rows:
        if row["status"] == Status.DONE:
            key = f"{row['kind']}/{row['outcome']}"
            by_outcome[key] = by_outcome.get(key, 0) + 1
            if row["code"] == reference_code and row["outcome"] != Outcome.PASSED:
                reference_not_passed[key] = reference_not_passed.get(key, 0) + 1
            if row["started_at"] and row["finished_at"]:
                run_times.append((row["finished_at"] - row["started_at"]).total_seconds())
            wait = (row["timings"] or {}).get("queue_wait_s")
            if isinstance(wait, int | float):
                queue_waits.append(float(wait))
    done = [row for row in rows if row["status"] == Status.DONE]
    return {
        "sent": len(rows),
        "graded": sum(1 for row in done if row["outcome"] != Outcome.INFRA_ERROR),
        "infra_error": sum(1 for row in done if row["outcome"] == Outcome.INFRA_ERROR),
        "pending": sum(1 for row in rows if row["status"] != Status.DONE),
        "pending_by_status": {status: sum(1 for row in rows if row["status"] == status) for status in (Status.QUEUED, Status.RUNNING)},
        "retried": sum(1 for row in rows if (row["attempts"] or 0) > 1),
        "by_kind_outcome": dict(sorted(by_outcome.items())),
        "reference_not_passed": reference_not_passed,
        "queue_wait_s": {"p50": _percentile(queue_waits, 0.5), "p95": _percentile(queue_waits, 0.95), "max": max(queue_waits, default=None)},
        "grading_s": {
            "p50": _percentile(run_times, 0.5),
            "p95": _percentile(run_times, 0.95),
            "mean": round(statistics.fmean(run_times), 2) if run_times else None,
        },
    }


def locust_figures() -> dict[str, Any]:
    """Latency per request name and overall, from Locust's CSV statistics."""
    path = WORK_DIR / "locust_stats.csv"
    if not path.exists():
        return {"requests": {}, "overall": {}}
    requests: dict[str, dict[str, Any]] = {}
    overall: dict[str, Any] = {}

    def number(text: str) -> float | None:
        return None if text in ("", "N/A") else round(float(text), 1)

    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            figures = {
                "count": int(row["Request Count"]),
                "failures": int(row["Failure Count"]),
                "p50_ms": number(row["50%"]),
                "p95_ms": number(row["95%"]),
                "max_ms": number(row["Max Response Time"]),
                "rps": number(row["Requests/s"]),
            }
            if row["Name"] == "Aggregated":
                overall = figures
            else:
                requests[row["Name"]] = figures
    return {"requests": requests, "overall": overall}


def _learner_counts() -> dict[str, Any]:
    path = WORK_DIR / "learner-counts.json"
    if not path.exists():
        return {}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _load_average() -> list[float]:
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except OSError:
        return []


def stage_figures(config: Config, learners: dict[str, Any], cpu: CpuSampler | None = None) -> list[dict[str, Any]]:
    """Each step's refusals and result waits, from the learners' own timelines.

    A step is judged on the Run/Submit requests sent after its first
    ``settle_s`` seconds (the new learners log in and the queue settles)
    and on the results of the jobs sent then.
    """
    origin = float(learners.get("shape_started_at") or 0.0)
    sends = [(float(t), str(answer)) for t, answer, _ in learners.get("sends", [])]
    results = [(float(t), float(waited)) for t, waited in learners.get("results", [])]
    figures = []
    start = origin
    for users, seconds in config.stages:
        begin, end = start + min(config.settle_s, seconds // 2), start + seconds
        start = end
        answers = [answer for t, answer in sends if begin <= t < end]
        waits = [waited for t, waited in results if begin <= t < end]
        busy = sum(1 for answer in answers if answer == "busy")
        busy_share = busy / len(answers) if answers else None
        wait_p95 = _percentile(waits, 0.95)
        serves = bool(answers) and bool(waits) and busy_share is not None and busy_share <= MAX_BUSY_SHARE and wait_p95 is not None and wait_p95 <= MAX_WAIT_P95_S
        figures.append({
            "learners": users, "seconds": seconds, "requests": len(answers), "busy": busy,
            "busy_share": round(busy_share, 3) if busy_share is not None else None, "results": len(waits),
            "jobs_per_min": round(len(waits) / max(1.0, end - begin) * 60, 1),
            "result_wait_p50_s": _percentile(waits, 0.5), "result_wait_p95_s": wait_p95, "serves": serves,
            "cpu_split": cpu.split(begin, end) if cpu is not None else None,
        })  # fmt: skip
    return figures


def capacity_found(stages: list[dict[str, Any]]) -> int:
    """The most learners of a step that served them, every smaller step having served its own too."""
    found = 0
    for stage in sorted(stages, key=lambda item: item["learners"]):
        if not stage["serves"]:
            break
        found = stage["learners"]
    return found


def refusal_figures(learners: dict[str, Any]) -> dict[str, Any]:
    """Refusals as learners saw them: did each carry a Retry-After, and did waiting it work?"""
    refusals = [(answer, header) for _, answer, header in learners.get("sends", []) if answer in ("busy", "throttled")]
    retries: dict[str, int] = learners.get("retries", {})
    tried = retries.get("accepted", 0) + retries.get("refused", 0)
    return {
        "refusals": len(refusals),
        "without_retry_after": sum(1 for _, header in refusals if header is None or header < 1),
        "retry_after_max_s": max((header for _, header in refusals if header is not None), default=None),
        "retries_after_waiting": tried,
        "retries_accepted_share": round(retries.get("accepted", 0) / tried, 3) if tried else None,
    }


def build_report(
    config: Config, image: str, started: float, drained_s: float, load_before: list[float], load_after: list[float], cpu: CpuSampler | None = None
) -> dict[str, Any]:
    learners = _learner_counts()
    stages = stage_figures(config, learners, cpu)
    capacity = capacity_found(stages)
    refusals = refusal_figures(learners)
    counts: dict[str, int] = learners.get("counts", {})
    status_codes: dict[str, int] = learners.get("status_codes", {})
    locust = locust_figures()
    submissions = submission_figures()
    refused = {
        "busy_503": counts.get("refused_busy", 0),
        "throttled_429": counts.get("refused_throttled", 0),
        "in_flight_409": counts.get("refused_in_flight", 0),
        "stale_version_409": counts.get("refused_stale_version", 0),
    }
    statuses: dict[int, int] = {}
    for key, n in status_codes.items():
        code = int(key.rsplit(" ", 1)[1])
        statuses[code] = statuses.get(code, 0) + n
    # A 503 with the grader's "busy" message is a refusal; any other 5xx is an error.
    five_xx = sum(n for code, n in statuses.items() if code >= 500) - refused["busy_503"]
    errors = int(locust["overall"].get("failures", 0))
    verdicts = {
        "no 5xx": five_xx == 0,
        "no request errors": errors == 0,
        "every learner logged in": counts.get("logged_in", 0) >= config.users and not counts.get("login_failed", 0),
        "submissions were sent and graded": submissions["sent"] > 0 and submissions["graded"] > 0,
        "no infra_error": submissions["infra_error"] == 0,
        "nothing left pending": submissions["pending"] == 0,
        "every refusal carried a Retry-After": refusals["without_retry_after"] == 0,
    }
    if len(config.stages) > 1:
        verdicts[f"serves at least {TARGET_CAPACITY} learners (busy <= {MAX_BUSY_SHARE:.0%}, result wait p95 <= {MAX_WAIT_P95_S:g} s): {capacity}"] = (
            capacity >= TARGET_CAPACITY
        )
    return {
        "config": {
            "users": config.users,
            "spawn_rate": config.spawn_rate,
            "duration": config.duration,
            "stages": [list(stage) for stage in config.stages],
            "settle_s": config.settle_s,
            "web": f"gunicorn gthread {config.web_workers}x{config.web_threads} on {config.host}",
            "worker_concurrency": config.worker_concurrency,
            "database": os.environ.get("DATABASE_URL", "").split("://", 1)[0] or "sqlite",
            "sandbox_image": image,
            "sse_share": float(os.environ.get("LOADTEST_SSE_SHARE") or 0),
            # Platform settings this run overrode from the environment.
            "overrides": {key: value for key, value in sorted(os.environ.items()) if key.startswith(("GRADER_", "SANDBOX_")) and key != "SANDBOX_IMAGE"},
            "cpus": os.cpu_count(),
        },
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "wall_s": round(time.time() - started, 1),
        "load_average": {"before": load_before, "after": load_after},
        "latency": {
            **locust,
            "groups": learners.get("latency_groups_ms", {}),
            "groups_steady": learners.get("latency_groups_steady_ms", {}),
            "by_minute": learners.get("latency_by_minute_ms", {}),
        },
        "errors": {"failed_requests": errors, "http_5xx": five_xx, "by_status": dict(sorted(statuses.items()))},
        "submissions": {**submissions, "refused": refused, "drain_wait_s": drained_s},
        "capacity": {"learners_served": capacity, "target": TARGET_CAPACITY, "max_busy_share": MAX_BUSY_SHARE, "max_wait_p95_s": MAX_WAIT_P95_S, "stages": stages},
        "refusals": refusals,
        "learners": {
            "logged_in": counts.get("logged_in", 0),
            "login_failed": counts.get("login_failed", 0),
            "accepted": {kind: counts.get(f"{kind}_accepted", 0) for kind in ("run", "submit")},
            "saw_result": {kind: counts.get(f"{kind}_done", 0) for kind in ("run", "submit")},
            "gave_up_waiting": {kind: counts.get(f"{kind}_gave_up_waiting", 0) for kind in ("run", "submit")},
            "outcomes_seen": learners.get("outcomes", {}),
            "result_wait_s": learners.get("result_wait_s", {}),
        },
        "verdicts": verdicts,
        "result": "PASS" if all(verdicts.values()) else "FAIL",
    }


def results_path_for(report: dict[str, Any]) -> Path:
    """Where a report is kept: one file per database, so both can be committed."""
    return RESULTS_PATH if report["config"]["database"] == "sqlite" else RESULTS_PATH_POSTGRES


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value:.0f}"


def print_report(report: dict[str, Any]) -> None:
    config, latency, subs = report["config"], report["latency"], report["submissions"]
    print()
    print(f"Load test: up to {config['users']} learners for {config['duration']} in steps {config['stages']} ({config['web']}; {config['worker_concurrency']} grader slots)")
    if config["overrides"] or config["sse_share"]:
        print(f"  settings overridden: {config['overrides']}; learners on the live-update stream: {config['sse_share']:.0%}")
    print(f"  load average before {report['load_average']['before']}, after {report['load_average']['after']} on {config['cpus']} CPUs")
    print()
    print(f"  {'request':<22} {'count':>7} {'fail':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    rows = sorted(latency["requests"].items())
    if latency["overall"]:
        rows.append(("overall", latency["overall"]))
    for name, figures in rows:
        print(f"  {name:<22} {figures['count']:>7} {figures['failures']:>5} {_ms(figures['p50_ms']):>8} {_ms(figures['p95_ms']):>8} {_ms(figures['max_ms']):>8}")
    for label, key in (("", "groups"), (" steady", "groups_steady")):
        for group, figures in latency.get(key, {}).items():
            name = f"[{group}{label}]"
            print(f"  {name:<22} {figures['n']:>7} {'':>5} {_ms(figures['p50']):>8} {_ms(figures['p95']):>8} {_ms(figures['max']):>8}")
    print("  ([group]: all requests of that kind; [group steady]: those started after the last learner logged in)")
    by_minute = latency.get("by_minute", {})
    if by_minute:
        print("\n  per minute (p50 / p95 ms):  " + "  ".join(f"{group:>22}" for group in ("pages", "json api", "log in")))
        # The counts file's keys are strings, sorted as text ("10" before "2").
        for minute, groups in sorted(by_minute.items(), key=lambda item: int(item[0])):
            cells = []
            for group in ("pages", "json api", "log in"):
                figures = groups.get(group)
                cells.append(f"{_ms(figures['p50']) + ' / ' + _ms(figures['p95']) if figures else '-':>22}")
            print(f"  minute {int(minute) + 1:<19} " + "  ".join(cells))
    errors = report["errors"]
    print()
    print(f"  errors: {errors['failed_requests']} failed requests, {errors['http_5xx']} HTTP 5xx (besides 'busy' refusals); statuses {errors['by_status']}"
        + (" (0: no response within the learner's 60 s timeout, or no connection)" if errors["by_status"].get(0) else ""))
    refused = subs["refused"]
    print(
        f"  submissions: {subs['sent']} sent, {subs['graded']} graded, {subs['infra_error']} infra_error, {subs['pending']} still pending "
        f"(after waiting {subs['drain_wait_s']} s); refused: {refused['busy_503']} busy (503), {refused['throttled_429']} throttled (429), "
        f"{refused['in_flight_409']} in flight (409)"
    )
    print(f"  outcomes: {subs['by_kind_outcome']}; reference code not passing: {subs['reference_not_passed'] or 'none'}")
    print(f"  queue wait s: {subs['queue_wait_s']}; grading s: {subs['grading_s']}")
    learners = report["learners"]
    print(f"  learners: waited for a result {learners['result_wait_s']}; gave up waiting: {learners['gave_up_waiting']}")
    capacity = report["capacity"]
    print(f"\n  capacity search (each step judged after its first {config['settle_s']} s):")
    print(f"  {'learners':>8} {'requests':>8} {'busy':>6} {'busy %':>7} {'results':>7} {'jobs/min':>8} {'wait p50':>8} {'wait p95':>8}  serves")
    for stage in capacity["stages"]:
        share = "-" if stage["busy_share"] is None else f"{stage['busy_share']:.1%}"
        p50, p95 = (("-" if stage[key] is None else f"{stage[key]:.1f}") for key in ("result_wait_p50_s", "result_wait_p95_s"))
        print(f"  {stage['learners']:>8} {stage['requests']:>8} {stage['busy']:>6} {share:>7} {stage['results']:>7} {stage['jobs_per_min']:>8} "
              f"{p50:>8} {p95:>8}  {'yes' if stage['serves'] else 'no'}")
    print(f"  learners served: {capacity['learners_served']} (target {capacity['target']})")
    print("\n  where the CPU went in each step (share of the machine's busy time; 'busy cores' is busy time over all cores):")
    for stage in capacity["stages"]:
        split = stage.get("cpu_split")
        if split:
            busy = split.get("busy cores (of all)", 0.0)
            parts = ", ".join(f"{group} {share:.0%}" for group, share in sorted(split.items(), key=lambda item: -item[1]) if group != "busy cores (of all)")
            print(f"  {stage['learners']:>8} learners: busy cores {busy:.0%}; {parts}")
    refusals = report["refusals"]
    print(f"  refusals: {refusals['refusals']}, without Retry-After: {refusals['without_retry_after']}, longest Retry-After {refusals['retry_after_max_s']} s; "
          f"sent again after waiting it: {refusals['retries_after_waiting']}, accepted then: {refusals['retries_accepted_share']}")
    print()
    for name, ok in report["verdicts"].items():
        print(f"  [{'PASS' if ok else 'FAIL'}] {name}")
    results_path = results_path_for(report)
    print(f"\n  {report['result']}   (report: {results_path.relative_to(REPO_ROOT)}, logs: {LOG_DIR.relative_to(REPO_ROOT)}/)")


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """So that ``kill`` of the driver also stops the stack (via ``finally``)."""

    def handler(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_load_test(config: Config) -> int:
    started = time.time()
    load_before = _load_average()
    env = stack_env(config.stack)
    stack = Stack(env, config.stack)
    cpu = CpuSampler()
    with _sigterm_as_interrupt():
        try:
            image = prepare(config.stack, env)
            _setup_django(env)
            _log(f"starting the stack (logs in {LOG_DIR.relative_to(REPO_ROOT)}/)")
            start(stack, config.stack)
            cpu.start()
            _run_locust(config, env)
            stack.check_alive()
            drained_s = _drain(config, stack)
            load_after = _load_average()
            cpu.stop()
        except KeyboardInterrupt:
            _log("interrupted")
            return 130
        finally:
            stack.stop()
    report = build_report(config, image, started, drained_s, load_before, load_after, cpu)
    results_path_for(report).write_text(json.dumps(report, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    print_report(report)
    return 0 if report["result"] == "PASS" else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.loadtest", description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.parse_args(argv)
    return run_load_test(Config.from_env())


if __name__ == "__main__":
    sys.exit(main())
