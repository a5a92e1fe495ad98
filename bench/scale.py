"""`make bench-scale`: every page at a year of a busy deployment, through gunicorn, on PostgreSQL (issue 61).

Usage (from the repository root)::

    scripts/postgres.sh start
    DATABASE_URL="$(scripts/postgres.sh url)" .venv/bin/python -m bench.scale            # 1/10, then full
    DATABASE_URL="$(scripts/postgres.sh url)" .venv/bin/python -m bench.scale --scale 0.1

For each ``--scale`` (default 0.1 then 1.0) it makes a throw-away database
on the cluster of ``DATABASE_URL`` (``dojo_bench_scale``, recreated and
dropped at the end), migrates it, loads the shipped catalog
(``load_exercises``, timed), generates the deployment inside PostgreSQL
(bench/scale_fill.py: 10,000 learners, 50 courses, 1,000,000 submissions
with 20,000,000 test rows, 200,000 drafts, ... at 1.0) and starts gunicorn
on it (DEBUG off, sessions in the database so the bench can log in without
Redis). Then, ``--requests`` times each, requests taking turns:

- as a learner: the module page, the workspace of the hot rung (one tenth
  of all submissions), the attempt history, the state poll;
- as the courses' owner: the gradebook page and its CSV (read to the end;
  seconds, bytes and the gunicorn worker's peak RSS, which must not grow
  with the data);
- as an admin: the module and rung dashboards, the report queue, the admin
  submission list (as it opens, filtered by status and kind, and searched
  by user name),
  the rejudge preview of the hot rung;
- in this process: the reaper's sweep (``grader.lifecycle.reap``) and
  ``load_exercises`` again on the full database.

Each page is requested once more in this process with its queries captured,
and every SELECT is EXPLAINed: a sequential scan of a big table is flagged.
It prints p50/p95 per page and scale side by side, a PASS/FAIL line per
target (pages p95 <= 150 ms, dashboards <= 1 s, reaper sweep <= 100 ms, no
sequential scan of a big table) and writes bench/scale-results.json
(``--output``) and, from it, the scale section of docs/operations.md
(bench/sizing.py; not for another ``--output``). Figures taken while other
work loads the machine are not for the record: the load average is printed
and saved with them, and the guide says so.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.sizing import target_ms, write_scale_guide

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS = REPO_ROOT / "bench" / "scale-results.json"
DATABASE_NAME = "dojo_bench_scale"
# Tables whose sequential scan grows with the deployment (small catalog tables are scanned cheaply).
BIG_TABLES = ("grader_submission", "grader_submissiontestresult", "frontend_draft", "mentor_question", "aids_hintreveal",
              "aids_problemreport", "grader_progress", "grader_rejudgeresult", "courses_membership", "auth_user")
# A table is big from this many rows on (below it the planner rightly prefers a scan, as at --scale 0.001).
BIG_TABLE_ROWS = 20_000
SESSION_ENGINE = "django.contrib.sessions.backends.db"
LOG = REPO_ROOT / "var" / "bench-scale-gunicorn.log"
STATIC_ROOT = REPO_ROOT / "var" / "bench-scale-static"


def _setup() -> None:
    sys.path[:0] = [str(REPO_ROOT), str(REPO_ROOT / "platform")]
    os.environ.setdefault("SECRET_KEY", "bench-scale")
    os.environ["SESSION_ENGINE"] = SESSION_ENGINE
    os.environ["SESSION_CACHE_URL"] = "locmemcache://bench-sessions"
    os.environ["LTI_CACHE_URL"] = "locmemcache://bench-lti"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["STATIC_ROOT"] = str(STATIC_ROOT)
    import django

    django.setup()
    from django.conf import settings

    collect_static()

    database = settings.DATABASES["default"]
    if not database["ENGINE"].endswith("postgresql"):
        raise SystemExit('bench.scale needs PostgreSQL: DATABASE_URL="$(scripts/postgres.sh url)"')
    database["TEST"]["NAME"] = DATABASE_NAME
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver", "127.0.0.1"]


def collect_static() -> None:
    """gunicorn runs with DEBUG off: its pages need the static files' manifest in STATIC_ROOT (kept while no static file is newer)."""
    manifest = STATIC_ROOT / "staticfiles.json"
    sources = [path for folder in REPO_ROOT.glob("*/static") for path in folder.rglob("*") if path.is_file()]
    if manifest.exists() and all(path.stat().st_mtime < manifest.stat().st_mtime for path in sources):
        return
    env = {**os.environ, "STATIC_ROOT": str(STATIC_ROOT), "SECRET_KEY": os.environ.get("SECRET_KEY", "bench-scale")}
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=REPO_ROOT, env=env, check=True)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _summary(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(values), 1), "p95_ms": round(_percentile(values, 0.95), 1)}


class Web:
    """gunicorn on the bench database, and a keep-alive HTTP client per cookie."""

    def __init__(self, env: dict[str, str]) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.process = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi", "--pythonpath", "platform", "--bind", f"127.0.0.1:{self.port}",
             "--worker-class", "gthread", "--workers", "2", "--threads", "4", "--timeout", "300"],
            cwd=REPO_ROOT, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=LOG.open("w"),
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.get("/healthz", "")[0] == 200:
                    break
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"gunicorn did not start: {LOG.read_text()[-2000:]}")
            time.sleep(0.3)

    def get(self, path: str, cookie: str, *, stream: bool = False) -> tuple[int, int]:
        """(status, bytes read); a fresh connection each time, as a browser's first request of a page costs."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            connection.request("GET", path, headers={"Cookie": cookie, "Host": "127.0.0.1"})
            response = connection.getresponse()
            size = 0
            while chunk := response.read(65536):
                size += len(chunk)
            return response.status, size
        finally:
            connection.close()

    def peak_rss_kib(self) -> int:
        """The highest peak RSS (VmHWM) of gunicorn's workers."""
        peaks = []
        for child in Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split():
            status = Path(f"/proc/{child}/status").read_text()
            match = re.search(r"VmHWM:\s+(\d+) kB", status)
            if match:
                peaks.append(int(match.group(1)))
        return max(peaks, default=0)

    def stop(self) -> None:
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def _cookie(user_id: int) -> str:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client, override_settings

    client = Client()
    with override_settings(SESSION_ENGINE=SESSION_ENGINE):  # gunicorn's, whatever this process uses
        client.force_login(get_user_model().objects.get(pk=user_id))
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def _pages(world: Any) -> dict[str, tuple[str, int]]:
    """Page name -> (path, user id who opens it)."""
    from django.urls import reverse

    from courses.models import Assignment
    from grader.models import Submission

    learner, admin, teacher = world.hot_learner_id, world.admin_id, world.teacher_id
    latest = Submission.objects.filter(user_id=learner).order_by("-pk").values_list("pk", flat=True).first()
    assignment = Assignment.objects.filter(course__slug=world.course_slug).order_by("due_at").first()
    assert assignment is not None and latest is not None
    rung = world.hot_rung_slug
    return {
        "module_page": (reverse("module", args=[world.module_slug]), learner),
        "workspace": (reverse("rung", args=[rung]), learner),
        "attempt_history": (reverse("rung-history", args=[rung]), learner),
        "state_poll": (reverse("submission-state", args=[latest]), learner),
        "gradebook": (reverse("courses:gradebook", args=[world.course_slug]), teacher),
        "module_dashboard": (reverse("authoring:module-dashboard", args=[world.module_slug]), admin),
        "rung_dashboard": (reverse("authoring:rung-dashboard", args=[world.module_slug, rung]), admin),
        "report_queue": (reverse("authoring:reports", args=[world.module_slug]), admin),
        "admin_submissions": (reverse("admin:grader_submission_changelist"), admin),
        "admin_submissions_filtered": (reverse("admin:grader_submission_changelist") + "?status__exact=done&kind__exact=submit", admin),
        "admin_submissions_search": (reverse("admin:grader_submission_changelist") + "?q=scale-learner-000042", admin),
        "rejudge_preview": (reverse("authoring:rejudge", args=[world.rejudge_id]), admin),
    }


def _explain(pages: dict[str, tuple[str, int]]) -> dict[str, Any]:
    """Each page's queries and the reaper's sweep's (captured in this process) EXPLAINed: the sequential scans of big tables."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from grader.lifecycle import reap

    def page(path: str, user_id: int) -> Callable[[], int]:
        def get() -> int:
            client = Client()
            client.force_login(get_user_model().objects.get(pk=user_id))
            response = client.get(path)
            if getattr(response, "streaming", False):
                for _ in response.streaming_content:  # type: ignore[attr-defined]
                    pass
            return response.status_code
        return get

    def sweep() -> int:
        reap()
        return 200

    calls = {name: page(path, user_id) for name, (path, user_id) in pages.items()}
    calls["reaper_sweep"] = sweep
    with connection.cursor() as cursor:
        cursor.execute("SELECT relname, reltuples FROM pg_class WHERE relname = ANY(%s)", [list(BIG_TABLES)])
        big = {table for table, rows in cursor.fetchall() if rows >= BIG_TABLE_ROWS}
    found: dict[str, Any] = {}
    for name, call in calls.items():
        with CaptureQueriesContext(connection) as captured:
            status = call()
        scans: list[str] = []
        selects = [query["sql"] for query in captured.captured_queries if query["sql"].lstrip().upper().startswith("SELECT")]
        with connection.cursor() as cursor:
            for sql in selects:
                cursor.execute("EXPLAIN (FORMAT JSON) " + sql)
                plan = cursor.fetchone()[0]
                plan = json.loads(plan) if isinstance(plan, str) else plan
                for node in _nodes(plan[0]["Plan"]):
                    if node.get("Node Type") == "Seq Scan" and node.get("Relation Name") in big:
                        scans.append(f"{node['Relation Name']} (est. {node.get('Plan Rows')} rows): {sql[:300]}")
        found[name] = {"status": status, "queries": len(captured), "seq_scans_of_big_tables": scans}
    return found


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = [plan]
    for child in plan.get("Plans", []):
        nodes += _nodes(child)
    return nodes


def _disk_bytes() -> dict[str, int]:
    """The database's size on disk and its two biggest tables' (indexes included): the disk a year takes."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database()), pg_total_relation_size('grader_submission'), "
                       "pg_total_relation_size('grader_submissiontestresult')")
        database, submissions, test_rows = cursor.fetchone()
    return {"database": database, "grader_submission": submissions, "grader_submissiontestresult": test_rows}


def _timed_ms(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def _database_url() -> str:
    from urllib.parse import quote

    from django.conf import settings

    database = settings.DATABASES["default"]
    password = quote(str(database.get("PASSWORD") or ""), safe="")
    credentials = f"{quote(str(database['USER']), safe='')}:{password}@" if password else f"{quote(str(database['USER']), safe='')}@"
    return f"postgres://{credentials}{database['HOST']}:{database['PORT']}/{quote(str(database['NAME']), safe='')}"


def measure_current_database(scale: float, requests: int, *, debug: bool = False) -> dict[str, Any]:
    """Load the catalog, fill the (migrated, empty) current database at ``scale`` and measure every page.

    ``debug``: gunicorn with DEBUG on, which needs no collected static files: for the smoke test only (DEBUG keeps every query).
    """
    from django.core.management import call_command

    from bench import scale_fill
    from grader.lifecycle import reap

    result: dict[str, Any] = {"scale": scale}
    load_empty_ms = _timed_ms(lambda: call_command("load_exercises", verbosity=0))
    started = time.perf_counter()
    world = scale_fill.fill(scale)
    result["fill_s"] = round(time.perf_counter() - started, 1)
    result["rows"], result["fill_seconds"] = world.counts, world.seconds
    result["disk_bytes"] = _disk_bytes()
    print(f"  filled in {result['fill_s']} s", flush=True)
    env = {**os.environ, "DATABASE_URL": _database_url(), "DEBUG": "1" if debug else "0", "ALLOWED_HOSTS": "127.0.0.1,localhost", "LOG_LEVEL": "WARNING",
           "SESSION_ENGINE": SESSION_ENGINE, "STATIC_ROOT": str(STATIC_ROOT),
           "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "platform")])}
    web = Web(env)
    try:
        pages = _pages(world)
        cookies = {user_id: _cookie(user_id) for _path, user_id in pages.values()}
        for name, (path, user_id) in pages.items():  # warm, and every page must answer
            status, _size = web.get(path, cookies[user_id])
            if status != 200:
                raise RuntimeError(f"{name} ({path}) answered {status}; gunicorn's log: {LOG.read_text()[-3000:]}")
        times: dict[str, list[float]] = {name: [] for name in pages}
        times["reaper_sweep"] = []
        load_before = os.getloadavg()[0]
        for _turn in range(requests):
            for name, (path, user_id) in pages.items():
                times[name].append(_timed_ms(lambda path=path, user_id=user_id: web.get(path, cookies[user_id])))  # type: ignore[misc]
            times["reaper_sweep"].append(_timed_ms(reap))
        figures: dict[str, Any] = {name: _summary(values) for name, values in times.items()}
        csv_path = pages["gradebook"][0].replace("/gradebook/", "/gradebook.csv")
        rss_before = web.peak_rss_kib()
        started = time.perf_counter()
        status, size = web.get(csv_path, cookies[world.teacher_id])
        figures["gradebook_csv"] = {"s": round(time.perf_counter() - started, 2), "bytes": size, "status": status,
                                    "worker_peak_rss_kib_before": rss_before, "worker_peak_rss_kib_after": web.peak_rss_kib()}
    finally:
        web.stop()
    figures["load_exercises"] = {"empty_ms": round(load_empty_ms), "full_ms": round(_timed_ms(lambda: call_command("load_exercises", verbosity=0)))}
    result["pages"] = figures
    result["explain"] = _explain(pages)
    result["load_average"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    return result


def run_scale(scale: float, requests: int) -> dict[str, Any]:
    """``measure_current_database`` in a fresh ``dojo_bench_scale``, dropped at the end."""
    from django.db import connections
    from django.test.utils import setup_databases, teardown_databases

    from bench import scale_fill

    print(f"\n== scale {scale}: {scale_fill.sizes(scale)}", flush=True)
    old_config = setup_databases(verbosity=0, interactive=False)
    try:
        return measure_current_database(scale, requests)
    finally:
        connections.close_all()
        teardown_databases(old_config, verbosity=0)


def _targets(result: dict[str, Any]) -> dict[str, bool]:
    pages = result["pages"]
    targets = {}
    for name, figures in pages.items():
        if "p95_ms" not in figures:
            continue
        limit = target_ms(name)
        targets[f"{name} p95 <= {limit:.0f} ms"] = figures["p95_ms"] <= limit
    for name, found in result["explain"].items():
        targets[f"{name}: no sequential scan of a big table"] = not found["seq_scans_of_big_tables"]
    return targets


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scale", type=float, action="append", help="Share of a full year (1.0); repeat for several (default 0.1 and 1.0).")
    parser.add_argument("--requests", type=int, default=int(os.environ.get("BENCH_SCALE_REQUESTS", "20")), help="Requests per page (default 20).")
    parser.add_argument("--output", type=Path, default=RESULTS)
    options = parser.parse_args(argv)
    scales = options.scale or [0.1, 1.0]
    # A TERM (or INT in the background) stops gunicorn and drops the database on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _setup()
    results = [run_scale(scale, options.requests) for scale in scales]
    met = report(results, options.requests, options.output)
    if options.output.resolve() == RESULTS:
        write_scale_guide(json.loads(RESULTS.read_text()))  # docs/operations.md quotes this run
        print("  docs/operations.md's scale figures rewritten from it")
    return 0 if met else 1


def report(results: list[dict[str, Any]], requests: int, output: Path) -> bool:
    """Print the pages x scales table and the missed targets, write ``output``; whether every target was met."""
    targets = {f"scale {result['scale']}: {name}": ok for result in results for name, ok in _targets(result).items()}
    names = list(results[0]["pages"])
    print("\n" + f"{'page':30}" + "".join(f"{'p50/p95 ms @' + str(r['scale']):>24}" for r in results))
    for name in names:
        row = f"{name:30}"
        for result in results:
            figures = result["pages"][name]
            cell = (f"{figures['p50_ms']:.0f} / {figures['p95_ms']:.0f}" if "p95_ms" in figures
                    else f"{figures['s']} s, peak RSS {figures['worker_peak_rss_kib_after'] // 1024} MiB" if "s" in figures
                    else f"{figures['empty_ms']} / {figures['full_ms']} ms")
            row += f"{cell:>24}"
        print(row)
    for result in results:
        print(f"scale {result['scale']}: filled in {result['fill_s']} s, load average {result['load_average']}")
        for name, found in result["explain"].items():
            for scan in found["seq_scans_of_big_tables"]:
                print(f"  SEQ SCAN on {name}: {scan[:200]}")
    for name, ok in targets.items():
        if not ok:
            print(f"FAIL: {name}")
    print(f"{sum(targets.values())} of {len(targets)} targets met")
    output.write_text(json.dumps({"requests": requests, "scales": results, "targets": targets,
                                  "note": "figures under load are not for the record; see load_average"}, indent=2) + "\n")
    return all(targets.values())


if __name__ == "__main__":
    sys.exit(main())
