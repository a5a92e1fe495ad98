"""The harness's main program: PID 1's child in the sandbox container.

Order matters, and is the security argument:
1. As root, import pytest and torch (so a pre-started container is warm),
   then fork the launcher (``launcher``), which shares those imports and
   keeps root's power to start and kill learner processes; it starts the
   first learner fork server under the learner uid, with its stdout/stderr
   on pipes this process drains (and caps), and hands back the server's
   control channel.
2. Read the job from stdin: the nonce, the tests, the learner's source.
   Nothing of it is on a command line or in the environment.
3. Write the tests into a folder only the harness uid can read, drop to the
   harness uid (which clears every capability) and run pytest. A Submit runs
   again, each test in a fresh learner process, under a new fork server that
   the launcher starts after killing every learner process and file.
4. Print events, each tagged with the nonce, on stdout: the host reads them
   through the Docker API and accepts nothing without the nonce. Whatever
   happens after the job arrives, a report is printed.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import socket
import sys
import threading
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .launcher import LauncherClient, fork_launcher

if TYPE_CHECKING:
    from .rerun import RerunVerdict

HARNESS_UID = 1001
LEARNER_UID = 1002
WORK = Path("/work")
TEST_DIR = WORK / "harness" / "tests"
LEARNER_DIR = WORK / "learner"
MAX_PAYLOAD = 8 * 1024 * 1024
STORED_OUTPUT = 64 * 1024
HARNESS_OOM_SCORE_ADJ = -900
LEARNER_ENV = {
    "PATH": "/opt/venv/bin:/usr/bin:/bin",
    "HOME": "/work/learner",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
    # Set by the runner from the CPU quota: torch and BLAS size their pools by it.
    "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
}


class OutputTap:
    """Drains one learner pipe: keeps the first bytes, counts all of them."""

    def __init__(self, stream: IO[bytes], limit: int, on_flood: threading.Event) -> None:
        self.stream = stream
        self.limit = limit
        self.on_flood = on_flood
        self.kept = bytearray()
        self.total = 0
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        while True:
            chunk = self.stream.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                return
            self.total += len(chunk)
            if len(self.kept) < STORED_OUTPUT:
                self.kept += chunk[: STORED_OUTPUT - len(self.kept)]
            if self.total > self.limit:
                self.on_flood.set()

    def text(self) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        if self.total > len(self.kept):
            text += f"\n[... output truncated: {self.total} bytes in all ...]"
        return text


class Emitter:
    """Writes nonce-tagged events on the report stream (the real stdout)."""

    def __init__(self, nonce: str, stream: IO[str]) -> None:
        self.prefix = f"@@DOJO {nonce} "
        self.stream = stream
        self.lock = threading.Lock()

    def emit(self, event: str, **data: Any) -> None:
        line = self.prefix + json.dumps({"event": event, **data}, separators=(",", ":")) + "\n"
        with self.lock:
            self.stream.write(line)
            self.stream.flush()


def _cgroup_value(*candidates: str, key: str | None = None) -> int | None:
    for path in candidates:
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        if key is None:
            try:
                return int(text.split()[0])
            except (ValueError, IndexError):
                continue
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == key:
                return int(parts[1])
    return None


def oom_kills() -> int:
    return _cgroup_value("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control", key="oom_kill") or 0


def peak_memory() -> int | None:
    return _cgroup_value("/sys/fs/cgroup/memory.peak", "/sys/fs/cgroup/memory/memory.max_usage_in_bytes")


HARNESS_DIRS = (WORK / "harness", TEST_DIR, WORK / "harness" / "tmp")


def _prepare_dirs() -> None:
    # NOTE: chmod before chown: without CAP_FOWNER root cannot chmod a file it
    # no longer owns. The harness dirs stay root's until the tests are in.
    for path in (*HARNESS_DIRS, LEARNER_DIR):
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o700)
    os.chown(LEARNER_DIR, LEARNER_UID, LEARNER_UID)


def _set_own_oom_score(value: int) -> None:
    # As root with CAP_SYS_RESOURCE: the harness and the launcher are the
    # last the kernel picks on memory pressure, the learner (1000) the first.
    try:
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write(str(value))
    except OSError:
        pass


def _drop_privileges() -> None:
    os.setgroups([])
    os.setgid(HARNESS_UID)
    os.setuid(HARNESS_UID)
    os.environ.clear()
    os.environ.update({"PATH": "/opt/venv/bin:/usr/bin:/bin", "HOME": str(WORK / "harness"), "TMPDIR": str(WORK / "harness" / "tmp"), "LANG": "C.UTF-8"})


def _write_tests(tests: dict[str, str], reference: str) -> None:
    files = dict(tests)
    for name in files:
        if "/" in name or not name.startswith("test_") or not name.endswith(".py"):
            raise ValueError(f"bad test file name {name!r}")
    if reference:
        # Not a test file (pytest collects test_*.py only): the tests import it.
        files["reference.py"] = reference
    for name, source in files.items():
        path = TEST_DIR / name
        path.write_text(source)
        path.chmod(0o600)
        os.chown(path, HARNESS_UID, HARNESS_UID)
    for path in reversed(HARNESS_DIRS):  # innermost first: 0700 blocks root too
        os.chown(path, HARNESS_UID, HARNESS_UID)


def _warm_pytest() -> None:
    """One throw-away pytest run on a trivial test (harness code only, no
    learner code yet), so a job's run does not pay for pytest's lazy imports:
    plugins, assertion rewriting, reporting."""
    import pytest

    warm_dir = WORK / "warm"
    warm_dir.mkdir(mode=0o700, exist_ok=True)
    (warm_dir / "test_warm.py").write_text("def test_warm():\n    assert 1 + 1 == 2\n")
    pytest.main([str(warm_dir), "-q", "-p", "no:cacheprovider", "--noconftest", "--capture=sys", "--import-mode=importlib", "--rootdir", str(warm_dir), "-c", "/opt/harness/pytest.ini"])
    shutil.rmtree(warm_dir, ignore_errors=True)


def main() -> int:
    started = time.monotonic()
    # Keep the container's stdout for events only; anything else printed in
    # this process (pytest's own progress) goes to stderr.
    report_stream = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    os.umask(0o077)
    _prepare_dirs()
    _set_own_oom_score(HARNESS_OOM_SCORE_ADJ)
    # Heavy imports before the job arrives: a pre-started container is warm.
    import numpy  # noqa: F401
    import pytest  # noqa: F401
    import torch  # noqa: F401

    _warm_pytest()
    # Then the launcher is forked, before any thread starts and before the
    # job arrives: it keeps root's power to start and kill learner processes
    # after this process has dropped it, and it (with every fork server it
    # starts) shares these imports instead of paying for its own. The
    # learner's output goes to pipes drained here.
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()

    def close_in_launcher() -> None:
        report_stream.close()
        os.close(out_read)
        os.close(err_read)

    launcher = fork_launcher(LEARNER_UID, LEARNER_ENV, out_write, err_write, close_in_launcher)
    os.close(out_write)
    os.close(err_write)
    control = launcher.start()

    # A pre-started (pooled) container that no job comes for ends by itself.
    idle_s = float(os.environ.get("DOJO_IDLE_S") or 0)
    if idle_s > 0 and not select.select([sys.stdin.buffer], [], [], idle_s)[0]:
        return 0
    raw_payload = sys.stdin.buffer.read(MAX_PAYLOAD + 1)
    if len(raw_payload) > MAX_PAYLOAD:
        raise ValueError("job payload too large")
    payload = json.loads(raw_payload)
    emitter = Emitter(str(payload["nonce"]), report_stream)
    flood = threading.Event()
    limits = payload.get("limits", {})
    output_limit = int(limits.get("output_bytes", 1024 * 1024))
    taps = (
        OutputTap(os.fdopen(out_read, "rb"), output_limit, flood),
        OutputTap(os.fdopen(err_read, "rb"), output_limit, flood),
    )
    try:
        _write_tests(dict(payload["tests"]), str(payload.get("reference") or ""))
        baseline_ooms = oom_kills()
        _drop_privileges()
        os.chdir(WORK / "harness")
        # The tests' own helpers: ``import reference`` and ``grading.job_seed()``.
        sys.path.insert(0, str(TEST_DIR))
        os.environ["DOJO_SEED"] = str(int(payload.get("seed") or 0))
        report = _grade(payload, emitter, launcher, control, flood, taps, baseline_ooms, started)
    except MemoryError:
        report = {"outcome": "memory_limit", "message": "Your code's results took more memory than the grader allows."}
    except Exception as exc:  # noqa: BLE001 - whatever broke, the host gets a report
        report = {"outcome": "infra_error", "message": f"The grader failed: {type(exc).__name__}: {exc}"[:2000], "error_code": "harness_crashed"}
    emitter.emit("report", **report)
    return 0


def _grade(
    payload: dict[str, Any],
    emitter: Emitter,
    launcher: LauncherClient,
    control: socket.socket,
    flood: threading.Event,
    taps: tuple[OutputTap, OutputTap],
    baseline_ooms: int,
    started: float,
) -> dict[str, Any]:
    """Run the tests (twice for a Submit), and return the report's fields."""
    from .plugin import HarnessPlugin, RunState, TestRecord, run_tests
    from .proxy import Channel, ServerDied
    from .rerun import judge_rerun

    run_started = time.monotonic()
    emitter.emit("started", setup_s=round(run_started - started, 3))
    if payload.get("mode") == "mutants":  # a batch of the reference's mutants, not a learner's job
        from .mutants import run_batch

        return run_batch(payload, emitter, launcher, control, flood, taps)
    limits = payload.get("limits", {})
    time_s = float(limits.get("time_s", 30))
    output_limit = int(limits.get("output_bytes", 1024 * 1024))
    source = str(payload["source"])
    is_run = payload.get("mode") == "run"

    def stop() -> str | None:
        return "output flood" if flood.is_set() else None

    def on_test(record: TestRecord) -> None:
        emitter.emit("test", name=record.name, outcome=record.outcome, duration_s=round(record.duration_s, 4), message=record.message if is_run else "")

    def check_server(state: RunState, channel: Channel) -> None:
        # A learner that kills its fork server (os.kill(os.getppid(), 9)) may
        # still answer every call from its orphaned child: the run must not
        # count as passed, and nothing after it can be trusted.
        if state.learner_died is None and not channel.server_alive():
            state.learner_died = ServerDied(None)

    channel = Channel(control, deadline=run_started + time_s, abort=flood)
    shared = run_tests(str(TEST_DIR), HarnessPlugin(channel, source, fresh=False, stop=stop, on_test=on_test))
    check_server(shared, channel)
    calls = channel.calls
    rerun: RerunVerdict | None = None
    fatal = shared.timed_out or flood.is_set() or shared.learner_died is not None or shared.import_error is not None
    if payload.get("isolate") and not fatal and not shared.collect_errors:
        # Re-run every test in a fresh learner process, with its own budget,
        # after killing everything the first run left and under a new fork
        # server on a new channel: a test whose result changes depends on
        # state kept between calls.
        control.close()
        fresh_channel = Channel(launcher.reset(), deadline=time.monotonic() + time_s, abort=flood)
        fresh = run_tests(str(TEST_DIR), HarnessPlugin(fresh_channel, source, fresh=True, stop=stop))
        check_server(fresh, fresh_channel)
        calls += fresh_channel.calls
        rerun = judge_rerun(shared, fresh, time_s)
    run_s = time.monotonic() - run_started
    time.sleep(0.05)  # let the taps drain what the learner printed last

    new_ooms = oom_kills() - baseline_ooms
    tests = sorted(shared.tests.values(), key=lambda record: record.order)
    message = ""
    if shared.timed_out and shared.load_timed_out:
        outcome, message = "timeout", (
            f"Your code did not finish loading within the {time_s:g} s time limit: something at the top level of your file "
            "(outside any function) runs too long or forever, so no test could run."
        )
    elif shared.timed_out:
        outcome, message = "timeout", f"Your code did not finish within the {time_s:g} s time limit."
    elif flood.is_set():
        outcome, message = "output_limit", f"Your code printed more than {output_limit} bytes; output is capped."
    elif new_ooms > 0:
        outcome, message = "memory_limit", "Your code ran out of memory and was killed."
    elif shared.import_error is not None:
        outcome, message = "error", shared.import_error
    elif shared.learner_died is not None:
        outcome, message = "error", str(shared.learner_died)
    elif shared.collect_errors or not tests:
        outcome, message = "infra_error", "The tests could not be collected: " + "; ".join(shared.collect_errors)[:2000]
    elif rerun is not None and rerun.outcome is not None:
        outcome, message = rerun.outcome, rerun.message
    elif all(record.outcome == "passed" for record in tests):
        outcome = "passed"
    else:
        outcome = "failed"
    stdout_tap, stderr_tap = taps
    return {
        "outcome": outcome,
        "message": message[:4000],
        "tests": [record.__dict__ for record in tests],
        "state_leaks": rerun.leaky if rerun is not None else [],
        "stdout": stdout_tap.text() if payload.get("show_output") else "",
        "stderr": stderr_tap.text() if payload.get("show_output") else "",
        "output_bytes": stdout_tap.total + stderr_tap.total,
        "peak_memory_bytes": peak_memory(),
        "run_s": round(run_s, 3),
        "hidden_calls": calls,
        "rerun_failure": rerun.failure if rerun is not None and outcome == rerun.outcome else "",
    }
