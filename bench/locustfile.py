"""Locust scenario: learners browse to the KV-cache rung and Run / Submit code.

Run it through ``make loadtest`` (``bench/loadtest.py``), which starts a
throw-away stack, creates the accounts this file logs in with and reads the
counters it writes. Each simulated learner:

* logs in with its own account (``<LOADTEST_USER_PREFIX><n>``, the CSRF token
  taken from the login form, as a browser would);
* opens the catalog, the module page and the rung's workspace;
* then, in a loop: saves a draft now and then, Runs its code (mostly the
  reference solution, sometimes one of the rung's known-wrong solutions) or,
  less often, Submits it; polls the submission's state when the last state
  said to (``poll_after_ms``, as the page does: seconds apart far back in a
  queue, half a second near the start) until it is done (bounded); thinks
  5-15 s; now and then re-reads a page.

A well-behaved learner waits for a result before it sends again and honours
``Retry-After`` (bounded) when it is refused. 429 / 503 "busy" and 409 "in
flight" are refusals, not errors: they are counted apart and marked as
successes in Locust's statistics so its failure count holds only real errors.

This file is loaded by Locust (gevent, monkey-patched); it imports nothing
from the platform (``bench.polling``, which it shares with `make bench`,
neither, loaded by its path).
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import random
import re
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from locust import LoadTestShape, between, events, task
from locust.contrib.fasthttp import FastHttpUser, ResponseContextManager


def _load_polling() -> Any:
    """bench/polling.py, by its path: Locust puts bench/ itself first on
    sys.path, where ``bench`` names bench/bench.py, not the package."""
    spec = importlib.util.spec_from_file_location("bench_polling", Path(__file__).with_name("polling.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_polling = _load_polling()
POLL_FIRST_S: float = _polling.POLL_FIRST_S
next_poll_s = _polling.next_poll_s

REPO_ROOT = Path(__file__).resolve().parent.parent
MODULE_SLUG = os.environ.get("LOADTEST_MODULE", "inference-and-serving")
RUNG_SLUG = os.environ.get("LOADTEST_RUNG", "kv-cache-size")
RUNG_DIR = REPO_ROOT / "exercises" / "llm-systems-frontier" / MODULE_SLUG / "rungs" / "01-kv-cache-size"
USER_PREFIX = os.environ.get("LOADTEST_USER_PREFIX", "loadtest-")
PASSWORD = os.environ.get("LOADTEST_PASSWORD", "loadtest-pass-2f9c")
COUNTS_PATH = os.environ.get("LOADTEST_COUNTS_PATH", "")

# The learner's habits.
SHARE_WRONG = 0.2  # of sends use a known-wrong solution
SHARE_SUBMIT = 0.15  # of sends are Submits (hidden tests) rather than Runs
SHARE_DRAFT = 0.5  # of sends are preceded by a draft autosave, as the editor does
SHARE_REBROWSE = 0.15  # of loop turns re-read the catalog or the module page
POLL_MAX_S = float(os.environ.get("LOADTEST_POLL_MAX_S", "120"))
RETRY_AFTER_CAP_S = 60.0
# Share of learners that follow a result on the live-update stream (as the
# page does, holding a server thread) before polling; the rest only poll.
SSE_SHARE = float(os.environ.get("LOADTEST_SSE_SHARE", "0"))

REFERENCE_CODE = (RUNG_DIR / "reference.py").read_text(encoding="utf-8")
WRONG_CODES = {path.stem: path.read_text(encoding="utf-8") for path in sorted((RUNG_DIR / "wrong").glob("*.py"))}

_CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken"\s+value="([^"]+)"')
_VERSION_ATTR = re.compile(r'data-version="(\d+)"')
_user_numbers = itertools.count(1)
_counts_lock = threading.Lock()
# (what, detail) -> n; written to LOADTEST_COUNTS_PATH when Locust stops.
COUNTS: Counter[str] = Counter()
STATUS_CODES: Counter[str] = Counter()  # "<name> <status>" -> n, every response
OUTCOMES: Counter[str] = Counter()  # "<kind>/<code kind>/<outcome>" -> n, graded results seen by learners
WAITS_S: list[float] = []  # send -> done, seconds, graded results seen by learners
# Timelines for the capacity search (bench/loadtest.py cuts them into stages):
# every Run/Submit POST as (time, answer, Retry-After header or None), and
# every result as (time sent, seconds waited).
SENDS: list[tuple[float, str, float | None]] = []
RESULTS: list[tuple[float, float]] = []
# After a refusal, was the learner's next send, made after waiting the
# Retry-After it was given, accepted? ("accepted" / "refused").
RETRIES: Counter[str] = Counter()
SHAPE_STARTED_AT = {"t": 0.0}
# Locust's CSV has percentiles per request name only; these group them.
LATENCY_GROUPS = {
    "pages": ("catalog", "module page", "workspace", "login page"),
    "json api": ("run (POST)", "submit (POST)", "state poll", "draft autosave"),
    "events stream": ("events (SSE)",),
    "log in": ("log in",),
}
# (request start, ms) per group; "steady" figures count only requests started
# after the last learner logged in, past the login storm (password hashing).
LATENCIES_MS: dict[str, list[tuple[float, float]]] = {group: [] for group in LATENCY_GROUPS}
LAST_LOGIN_AT = {"t": 0.0}
_GROUP_OF = {name: group for group, names in LATENCY_GROUPS.items() for name in names}


def _count(counter: Counter[str], key: str, n: int = 1) -> None:
    with _counts_lock:
        counter[key] += n


class Learner(FastHttpUser):
    """One learner with one account, working on the KV-cache rung."""

    wait_time = between(5, 15)  # thinking between attempts
    network_timeout = 60.0
    connection_timeout = 30.0

    def on_start(self) -> None:
        self.number = next(_user_numbers)
        self.username = f"{USER_PREFIX}{self.number:04d}"
        self.csrf = ""
        self.version = 0
        self.logged_in = False
        self.uses_sse = random.random() < SSE_SHARE
        self.poll_after_s = POLL_FIRST_S
        self.retrying = False
        self._log_in()
        if self.logged_in:
            self._page("/", "catalog")
            self._page(f"/modules/{MODULE_SLUG}/", "module page")
            self._open_workspace()

    # ---- helpers --------------------------------------------------------------
    def _record(self, response: ResponseContextManager, name: str) -> None:
        _count(STATUS_CODES, f"{name} {response.status_code}")

    def _page(self, path: str, name: str) -> str:
        with self.client.get(path, name=name, catch_response=True) as response:
            self._record(response, name)
            if response.status_code != 200:
                response.failure(f"HTTP {response.status_code}")
                return ""
            return response.text or ""

    def _log_in(self) -> None:
        page = self._page("/accounts/login/", "login page")
        match = _CSRF_INPUT.search(page)
        if not match:
            _count(COUNTS, "login_failed")
            return
        body = urlencode({"csrfmiddlewaretoken": match.group(1), "username": self.username, "password": PASSWORD, "next": "/"})
        headers = {"Content-Type": "application/x-www-form-urlencoded", "Referer": f"{self.host}/accounts/login/"}
        with self.client.post("/accounts/login/", data=body, headers=headers, name="log in", allow_redirects=False, catch_response=True) as response:
            self._record(response, "log in")
            if response.status_code == 302:
                self.logged_in = True
                _count(COUNTS, "logged_in")
                with _counts_lock:
                    LAST_LOGIN_AT["t"] = max(LAST_LOGIN_AT["t"], time.time())
            else:
                response.failure(f"log in answered {response.status_code}, not a redirect")
                _count(COUNTS, "login_failed")

    def _open_workspace(self) -> None:
        page = self._page(f"/rungs/{RUNG_SLUG}/", "workspace")
        csrf, version = _CSRF_INPUT.search(page), _VERSION_ATTR.search(page)
        if csrf and version:
            self.csrf, self.version = csrf.group(1), int(version.group(1))

    def _post_form(self, path: str, fields: dict[str, Any], name: str) -> ResponseContextManager:
        headers = {"Content-Type": "application/x-www-form-urlencoded", "X-CSRFToken": self.csrf, "Referer": f"{self.host}/rungs/{RUNG_SLUG}/"}
        return self.client.post(path, data=urlencode(fields), headers=headers, name=name, catch_response=True)

    # ---- the loop ---------------------------------------------------------------
    @task
    def attempt(self) -> None:
        if not self.logged_in:
            self._log_in()
            if not self.logged_in:
                return
        if not self.version:
            self._open_workspace()
            if not self.version:
                return
        if random.random() < SHARE_REBROWSE:
            path, name = random.choice([("/", "catalog"), (f"/modules/{MODULE_SLUG}/", "module page"), (f"/rungs/{RUNG_SLUG}/", "workspace")])
            self._page(path, name)
        wrong = random.random() < SHARE_WRONG
        code_kind = random.choice(sorted(WRONG_CODES)) if wrong else "reference"
        code = WRONG_CODES[code_kind] if wrong else REFERENCE_CODE
        kind = "submit" if random.random() < SHARE_SUBMIT else "run"
        if random.random() < SHARE_DRAFT:
            with self._post_form(f"/rungs/{RUNG_SLUG}/draft", {"code": code}, "draft autosave") as response:
                self._record(response, "draft autosave")
                if response.status_code != 200:
                    response.failure(f"HTTP {response.status_code}")
        self._send(kind, "wrong" if wrong else "reference", code)

    def _send(self, kind: str, code_kind: str, code: str) -> None:
        name = f"{kind} (POST)"
        sent_at = time.monotonic()
        state_url, events_url, retry_after = "", "", 0.0
        with self._post_form(f"/rungs/{RUNG_SLUG}/{kind}", {"code": code, "version": self.version}, name) as response:
            self._record(response, name)
            status = response.status_code
            data = _json(response)
            header = response.headers.get("Retry-After") if status in (429, 503) else None
            try:
                retry_header = float(header) if header is not None else None
            except ValueError:
                retry_header = None
            answer = {202: "accepted", 409: "in_flight", 429: "throttled", 503: "busy"}.get(status, f"http_{status}")
            with _counts_lock:
                SENDS.append((time.time(), answer, retry_header))
                if self.retrying and status in (202, 503, 429):
                    RETRIES["accepted" if status == 202 else "refused"] += 1
            self.retrying = status in (429, 503)
            if status == 202 and "state_url" in data:
                response.success()
                _count(COUNTS, f"{kind}_accepted")
                state_url, events_url = str(data["state_url"]), str(data.get("events_url") or "")
            elif status in (409, 429, 503) and "error" in data:
                # Refused with a reason the page shows: backpressure working, not an error.
                response.success()
                stale = status == 409 and "updated" in str(data["error"])
                _count(COUNTS, "refused_stale_version" if stale else {409: "refused_in_flight", 429: "refused_throttled", 503: "refused_busy"}[status])
                retry_after = float(data.get("retry_after_s") or 0)
                if stale:
                    self.version = 0  # the exercise changed since the page was opened: reload it
            else:
                response.failure(f"HTTP {status}")
                _count(COUNTS, f"{kind}_error")
                return
        if not state_url:
            if retry_after:
                self.wait_for(min(retry_after, RETRY_AFTER_CAP_S))
            return
        self._follow(state_url, events_url, kind, code_kind, sent_at)

    def wait_for(self, seconds: float) -> None:
        """Sleep, but give up early when Locust is stopping this user."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.environment.runner is not None and self.environment.runner.state in ("stopping", "stopped"):
                return
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))

    def _follow(self, state_url: str, events_url: str, kind: str, code_kind: str, sent_at: float) -> None:
        """Wait for the result: the live-update stream first for an SSE
        learner (as the page does), then polling, within ``POLL_MAX_S``."""
        deadline = sent_at + POLL_MAX_S
        if self.uses_sse and events_url and self._listen(events_url, state_url, kind, code_kind, sent_at, deadline):
            return
        # At once (as the page does on sending), then when the state says.
        while time.monotonic() < deadline:
            if self._check_state(state_url, kind, code_kind, sent_at):
                return
            time.sleep(self.poll_after_s)
        _count(COUNTS, f"{kind}_gave_up_waiting")

    def _check_state(self, state_url: str, kind: str, code_kind: str, sent_at: float) -> bool:
        """Fetch the state once; True (and the result counted) once it is
        done. Keeps the state's hint of when to ask again in ``poll_after_s``."""
        with self.client.get(state_url, name="state poll", catch_response=True) as response:
            self._record(response, "state poll")
            if response.status_code != 200:
                response.failure(f"HTTP {response.status_code}")
                return False
            data = _json(response)
        if data.get("status") != "done":
            self.poll_after_s = next_poll_s(data)
            return False
        waited = time.monotonic() - sent_at
        _count(OUTCOMES, f"{kind}/{code_kind}/{data.get('outcome') or 'none'}")
        _count(COUNTS, f"{kind}_done")
        with _counts_lock:
            WAITS_S.append(waited)
            RESULTS.append((time.time() - waited, waited))
        return True

    def _listen(self, events_url: str, state_url: str, kind: str, code_kind: str, sent_at: float, deadline: float) -> bool:
        """Hold the server-sent-events stream open, fetching the state on every
        ``changed`` hint, until the result is in, the server ends the stream
        (it does after 60 s) or the deadline; True once the result is in."""
        with self.client.get(events_url, name="events (SSE)", stream=True, catch_response=True) as response:
            self._record(response, "events (SSE)")
            if response.status_code != 200:
                # 503: live updates unavailable; the page polls instead.
                if response.status_code != 503:
                    response.failure(f"HTTP {response.status_code}")
                return False
            pending = b""
            # One byte at a time: a larger read may wait for bytes the server has not sent yet.
            for chunk in response.iter_content(chunk_size=1, decode_content=False):
                pending += chunk if isinstance(chunk, bytes) else chunk.encode()
                if not pending.endswith(b"\n\n"):
                    continue
                event, pending = pending, b""
                if b"event: changed" in event and self._check_state(state_url, kind, code_kind, sent_at):
                    return True
                if time.monotonic() > deadline:
                    break
        return False


def _json(response: ResponseContextManager) -> dict[str, Any]:
    try:
        data = json.loads(response.text or "")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _percentiles(values: list[float]) -> dict[str, Any]:
    ordered = sorted(values)
    if not ordered:
        return {"n": 0, "p50": None, "p95": None, "max": None}
    return {
        "n": len(ordered),
        "p50": round(ordered[len(ordered) // 2], 1),
        "p95": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 1),
        "max": round(ordered[-1], 1),
    }


def _record_latency(name: str, response_time: float, start_time: float | None = None, **_kwargs: Any) -> None:
    group = _GROUP_OF.get(name)
    if group is not None:
        with _counts_lock:
            LATENCIES_MS[group].append((start_time or time.time(), response_time))


def _by_minute() -> dict[str, dict[str, Any]]:
    """Percentiles per minute of the run, per group: the login storm and any
    backlog show up in the first minutes, the steady state after."""
    starts = [started for values in LATENCIES_MS.values() for started, _ in values]
    if not starts:
        return {}
    first = min(starts)
    minutes: dict[str, dict[str, list[float]]] = {}
    for group, values in LATENCIES_MS.items():
        for started, ms in values:
            minutes.setdefault(str(int((started - first) // 60)), {}).setdefault(group, []).append(ms)
    return {minute: {group: _percentiles(ms) for group, ms in groups.items()} for minute, groups in sorted(minutes.items(), key=lambda item: int(item[0]))}


def _write_counts(**_kwargs: Any) -> None:
    if not COUNTS_PATH:
        return
    with _counts_lock:
        payload = {
            "counts": dict(COUNTS),
            "status_codes": dict(STATUS_CODES),
            "outcomes": dict(OUTCOMES),
            "result_wait_s": _percentiles(WAITS_S),
            "latency_groups_ms": {group: _percentiles([ms for _, ms in values]) for group, values in LATENCIES_MS.items()},
            "latency_groups_steady_ms": {
                group: _percentiles([ms for started, ms in values if started > LAST_LOGIN_AT["t"]])
                for group, values in LATENCIES_MS.items()
                if group != "log in"
            },
            "latency_by_minute_ms": _by_minute(),
            "sends": SENDS,
            "results": RESULTS,
            "retries": dict(RETRIES),
            "shape_started_at": SHAPE_STARTED_AT["t"],
        }
    Path(COUNTS_PATH).write_text(json.dumps(payload, indent=2, sort_keys=True), encoding="utf-8")


events.request.add_listener(_record_latency)  # type: ignore[no-untyped-call]
events.quitting.add_listener(_write_counts)  # type: ignore[no-untyped-call]


def _stages() -> list[tuple[int, float]]:
    """``LOADTEST_STAGES`` ("20:60,40:60,...": learners, seconds), set by bench/loadtest.py."""
    stages = []
    for part in os.environ.get("LOADTEST_STAGES", "").split(","):
        if part.strip():
            users, seconds = part.split(":")
            stages.append((int(users), float(seconds)))
    return stages


class Stages(LoadTestShape):
    """Steps of learners, each held for its time: the capacity search of ``make loadtest``."""

    stages = _stages()
    spawn_rate = float(os.environ.get("LOADTEST_SPAWN_RATE", "10"))

    def tick(self) -> tuple[int, float] | None:
        if not SHAPE_STARTED_AT["t"]:
            SHAPE_STARTED_AT["t"] = time.time()
        elapsed = self.get_run_time()  # type: ignore[no-untyped-call]
        end = 0.0
        for users, seconds in self.stages:
            end += seconds
            if elapsed < end:
                return users, self.spawn_rate
        return None
