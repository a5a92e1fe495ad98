"""The harness's main program: PID 1's child in the sandbox container.

Order matters, and is the security argument:
1. As root, start the learner fork server under the learner uid, with its
   stdout/stderr on pipes this process drains (and caps).
2. Import pytest and torch (so a pre-started container is warm), then read
   the job from stdin: the nonce, the tests, the learner's source. Nothing of
   it is on a command line or in the environment.
3. Write the tests into a folder only the harness uid can read, drop to the
   harness uid (which clears every capability) and run pytest.
4. Print events, each tagged with the nonce, on stdout: the host reads them
   through the Docker API and accepts nothing without the nonce.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

HARNESS_UID = 1001
LEARNER_UID = 1002
WORK = Path("/work")
TEST_DIR = WORK / "harness" / "tests"
LEARNER_DIR = WORK / "learner"
MAX_PAYLOAD = 8 * 1024 * 1024
STORED_OUTPUT = 64 * 1024
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


def _start_learner() -> tuple[socket.socket, subprocess.Popen[bytes]]:
    harness_end, learner_end = socket.socketpair()
    process = subprocess.Popen(
        [sys.executable, "-I", "-B", "/opt/harness/learner_entry.py", str(learner_end.fileno())],
        pass_fds=[learner_end.fileno()],
        user=LEARNER_UID,
        group=LEARNER_UID,
        extra_groups=[],
        cwd="/",  # root has no CAP_DAC_OVERRIDE here: the learner chdirs itself
        env=LEARNER_ENV,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    learner_end.close()
    return harness_end, process


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
    harness_sock, learner = _start_learner()
    flood = threading.Event()
    # Heavy imports before the job arrives: a pre-started container is warm.
    import pytest  # noqa: F401
    import torch  # noqa: F401

    from .plugin import HarnessPlugin, RunState, TestRecord, merge_fresh, run_tests
    from .proxy import Channel, ChannelBroken, ServerDied

    _warm_pytest()

    # A pre-started (pooled) container that no job comes for ends by itself.
    idle_s = float(os.environ.get("DOJO_IDLE_S") or 0)
    if idle_s > 0 and not select.select([sys.stdin.buffer], [], [], idle_s)[0]:
        return 0
    raw_payload = sys.stdin.buffer.read(MAX_PAYLOAD + 1)
    if len(raw_payload) > MAX_PAYLOAD:
        raise ValueError("job payload too large")
    payload = json.loads(raw_payload)
    nonce = str(payload["nonce"])
    emitter = Emitter(nonce, report_stream)
    limits = payload.get("limits", {})
    output_limit = int(limits.get("output_bytes", 1024 * 1024))
    stdout_tap = OutputTap(learner.stdout, output_limit, flood)  # type: ignore[arg-type]
    stderr_tap = OutputTap(learner.stderr, output_limit, flood)  # type: ignore[arg-type]
    _write_tests(dict(payload["tests"]), str(payload.get("reference") or ""))
    baseline_ooms = oom_kills()
    _drop_privileges()
    os.chdir(WORK / "harness")
    # The tests' own helpers: ``import reference`` and ``grading.job_seed()``.
    sys.path.insert(0, str(TEST_DIR))
    os.environ["DOJO_SEED"] = str(int(payload.get("seed") or 0))

    run_started = time.monotonic()
    emitter.emit("started", setup_s=round(run_started - started, 3))
    if payload.get("mode") == "mutants":  # a batch of the reference's mutants, not a learner's job
        from .mutants import run_batch

        return run_batch(payload, emitter, harness_sock, learner, flood, (stdout_tap, stderr_tap))
    time_s = float(limits.get("time_s", 30))
    source = str(payload["source"])

    def stop() -> str | None:
        return "output flood" if flood.is_set() else None

    def on_test(record: TestRecord) -> None:
        emitter.emit("test", name=record.name, outcome=record.outcome, duration_s=round(record.duration_s, 4), message=record.message if payload.get("mode") == "run" else "")

    def check_server(state: RunState) -> None:
        # A learner that kills its fork server (os.kill(os.getppid(), 9)) may
        # still answer every call from its orphaned child: the run must not
        # count as passed, and nothing after it can be trusted.
        if state.learner_died is None and learner.poll() is not None:
            state.learner_died = ServerDied(learner.returncode)

    channel = Channel(harness_sock, deadline=run_started + time_s, abort=flood)
    shared = run_tests(str(TEST_DIR), HarnessPlugin(channel, source, fresh=False, stop=stop, on_test=on_test))
    check_server(shared)
    leaky: list[str] = []
    fatal = shared.timed_out or flood.is_set() or shared.learner_died is not None or shared.import_error is not None
    if payload.get("isolate") and not fatal and not shared.collect_errors:
        # Re-run every test in a fresh learner process, with its own budget:
        # a test whose result changes depends on state kept between calls.
        fresh_channel = Channel(harness_sock, deadline=time.monotonic() + time_s, abort=flood)
        fresh = run_tests(str(TEST_DIR), HarnessPlugin(fresh_channel, source, fresh=True, stop=stop))
        check_server(fresh)
        if isinstance(fresh.learner_died, ServerDied | ChannelBroken):
            shared.learner_died = fresh.learner_died
        elif not fresh.timed_out:
            leaky = merge_fresh(shared.tests, fresh.tests)
    run_s = time.monotonic() - run_started
    time.sleep(0.05)  # let the taps drain what the learner printed last

    new_ooms = oom_kills() - baseline_ooms
    tests = sorted(shared.tests.values(), key=lambda record: record.order)
    message = ""
    if shared.timed_out:
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
    elif all(record.outcome == "passed" for record in tests):
        outcome = "passed"
    else:
        outcome = "failed"
    show_output = bool(payload.get("show_output"))
    emitter.emit(
        "report",
        outcome=outcome,
        message=message[:4000],
        tests=[record.__dict__ for record in tests],
        state_leaks=leaky,
        stdout=stdout_tap.text() if show_output else "",
        stderr=stderr_tap.text() if show_output else "",
        output_bytes=stdout_tap.total + stderr_tap.total,
        peak_memory_bytes=peak_memory(),
        run_s=round(run_s, 3),
    )
    return 0
