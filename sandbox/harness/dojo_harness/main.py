"""The harness's main program: PID 1's child in the sandbox container.

This process (root, with the container's few capabilities) is the
container's **job master**: it imports pytest and torch once, then serves
up to ``DOJO_MAX_JOBS`` jobs one after the other, each in a forked **job
process**, and between two jobs removes everything the first left
(``recycle``). Order matters, and is the security argument:

1. The master imports pytest and torch before any job (a pre-started or
   reused container is warm). It never reads a job itself and starts no
   thread, so nothing of any job is in the memory it forks from.
2. For each job it forks a job process, which forks the launcher
   (``launcher``) *before* it reads the job, so the launcher and every
   learner process hold nothing of it. The launcher keeps root's power to
   start and kill learner processes; it starts the first learner fork
   server under this job's own learner uid (``learner_uid``: a fresh uid
   per job of the container), with its stdout/stderr on pipes the job
   process drains (and caps), and hands back the server's control channel.
3. The job process reads one framed job from stdin (``<length>\\n<json>``):
   the nonce, the tests, the learner's source. Nothing of it is on a
   command line or in the environment.
4. It writes the tests into a folder only the harness uid can read, drops
   to the harness uid (which clears every capability) and runs pytest. A
   Submit runs again, each test in a fresh learner process, under a new
   fork server that the launcher starts after killing every learner
   process and file.
5. It prints events, each tagged with the job's nonce, on stdout: the host
   reads them through the Docker API and accepts nothing without the
   nonce. Whatever happens after the job arrives, a report is printed.
6. When the job process has ended, the master kills every process in the
   container but itself and PID 1, deletes every file in the writable
   places, checks that no process, file, IPC object or named socket is
   left, and only then prints ``@@DOJO-READY <n>``; otherwise it exits and
   the container is thrown away. ``@@DOJO-READY 0`` says it is warm, before
   the first job.
"""

from __future__ import annotations

import gc
import json
import os
import select
import shutil
import socket
import sys
import threading
import time
from typing import IO, TYPE_CHECKING, Any

from . import machine
from .identity import become, set_oom_score_adj
from .jobio import TEST_DIR, WORK, Emitter, OutputTap, cgroup_value, oom_kills
from .launcher import LauncherClient, LauncherFailed, fork_launcher
from .scrub import live_processes

if TYPE_CHECKING:
    from .rerun import RerunVerdict

HARNESS_UID = 1001
# Job n of a container runs its learner code as uid 1000 + 2n: 1002, 1004...
# (never the harness's odd uid), so nothing a job's learner left could be
# owned by, or signal, the next job's learner.
LEARNER_UID_BASE = 1000
# The most jobs one container serves (the host's SANDBOX_REUSE_JOBS is at most this).
MAX_JOBS = 16000
LEARNER_DIR = WORK / "learner"
MAX_PAYLOAD = 8 * 1024 * 1024
HARNESS_OOM_SCORE_ADJ = -900
# Set by the runner when huge pages are wanted (``sandbox.container``).
HUGE_PAGES_TUNABLE = "glibc.malloc.hugetlb=1"
LEARNER_ENV = {
    "PATH": "/opt/venv/bin:/usr/bin:/bin",
    "HOME": "/work/learner",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
    # The fresh uids have no passwd entry: getpass.getuser() reads these.
    "USER": "learner",
    "LOGNAME": "learner",
    # Set by the runner from the CPU quota: torch and BLAS size their pools by it.
    "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
}


def learner_uid(job_number: int) -> int:
    """The learner uid of the container's ``job_number``-th job (1-based)."""
    return LEARNER_UID_BASE + 2 * job_number


# The error code of a job whose container held a process of another job:
# the job is ours to retry elsewhere (``sandbox.errors.CONTAINER_TAINTED``).
CONTAINER_TAINTED = "container_tainted"


class ContainerTainted(Exception):
    """A live process of another uid than this job's and ours: nothing measured here is the learner's alone."""


def foreign_processes(uid: int) -> list[int]:
    """Live processes of any uid but root, the harness and this job's learner ``uid``.

    None should ever exist: the master proved none alive, and no process
    can change its uid. Checked all the same at a job's start and end,
    because an OOM kill is charged to the job only if every process the
    kernel could have chosen was this job's (``OomWatch``).
    """
    return live_processes(not_of=frozenset({0, HARNESS_UID, uid}))


class OomWatch:
    """Charges an OOM kill in the container during a job to that job, or to us.

    The kernel says how many OOM kills the container's cgroup saw, not
    whose. Learner processes run at ``oom_score_adj`` 1000, the harness's
    at -900: on memory pressure the kernel kills a learner process while
    one is alive. With no process of another uid than this job's learner
    and ours in the container from the job's start to its end (none can
    appear in between: no process changes its uid), the process killed was
    this job's, or one of ours once none of its was left, under memory its
    code took. Otherwise the kill may be another job's doing: the job is
    ours (``ContainerTainted``) and the container goes.
    """

    def __init__(self, uid: int) -> None:
        self.uid = uid
        self.baseline = oom_kills()
        self.foreign_at_start = foreign_processes(uid)

    def new_kills(self) -> int:
        return oom_kills() - self.baseline

    def check_alone(self) -> None:
        """Raise ``ContainerTainted`` when a process of another job was alive at the start or is now."""
        foreign = self.foreign_at_start or foreign_processes(self.uid)
        if foreign:
            raise ContainerTainted(f"processes of another uid in the container: {foreign[:10]}")


def memory_now() -> int | None:
    return cgroup_value("/sys/fs/cgroup/memory.current", "/sys/fs/cgroup/memory/memory.usage_in_bytes")


class MemorySampler:
    """The container's highest memory use during one job, sampled.

    The cgroup's own peak counts every job a reused container ran and
    cannot be reset from inside (the cgroup files are read-only), so each
    job samples the current use instead, every ``interval_s``.
    """

    def __init__(self, interval_s: float = 0.02) -> None:
        self.peak = memory_now()
        self._stop = threading.Event()
        self._interval_s = interval_s
        self._thread = threading.Thread(target=self._run, daemon=True)
        if self.peak is not None:
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            self.sample()

    def sample(self) -> None:
        value = memory_now()
        if value is not None and (self.peak is None or value > self.peak):
            self.peak = value

    def stop(self) -> int | None:
        self._stop.set()
        self.sample()
        return self.peak


HARNESS_DIRS = (WORK / "harness", TEST_DIR, WORK / "harness" / "tmp")


def _prepare_dirs(uid: int) -> None:
    # NOTE: chmod before chown: without CAP_FOWNER root cannot chmod a file it
    # no longer owns. The harness dirs stay root's until the tests are in.
    for path in (*HARNESS_DIRS, LEARNER_DIR):
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o700)
    os.chown(LEARNER_DIR, uid, uid)


def _drop_privileges() -> None:
    become(HARNESS_UID)
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


# The job process's exit status when stdin ended before a job came, and
# when it printed its report. Any other end (killed, or harness-side code
# that exited) ends the container too: the host then sees no report.
NO_MORE_JOBS = 75
JOB_REPORTED = 64


def read_frame(fd: int = 0) -> bytes | None:
    """One framed job from ``fd``: ``<length>\\n`` then that many bytes; None at EOF.

    Unbuffered reads only: the next job's bytes stay in the pipe for the
    next job process.
    """
    header = b""
    while not header.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte:
            return None
        header += byte
        if len(header) > 20:
            raise ValueError("bad job frame header")
    length = int(header)
    if not 0 < length <= MAX_PAYLOAD:
        raise ValueError("job payload too large")
    chunks, left = [], length
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise ValueError("job payload cut short")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def main() -> int:
    """The job master: warm up once, then serve jobs, each in a forked job process."""
    from .recycle import recycle

    # Keep the container's stdout for events only; anything else printed in
    # these processes (pytest's own progress) goes to stderr.
    report_stream = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    os.umask(0o077)
    # As root with CAP_SYS_RESOURCE: the harness and the launcher are the
    # last the kernel picks on memory pressure, the learner (1000) the first.
    set_oom_score_adj(HARNESS_OOM_SCORE_ADJ)
    # Heavy imports before any job arrives: a pre-started container is warm,
    # and every job process (a fork) shares them.
    import numpy  # noqa: F401
    import pytest  # noqa: F401
    import torch  # noqa: F401

    _warm_pytest()
    # Every job process is a fork of this one: frozen objects are never
    # scanned by a child's garbage collector, so their pages stay shared
    # instead of being copied on the first collection.
    gc.collect()
    gc.freeze()
    # With huge pages asked for (``SANDBOX_HUGE_PAGES``), the warm heap is
    # folded into them: every fork of this process copies fewer page-table
    # entries (``hugepages``).
    if HUGE_PAGES_TUNABLE in os.environ.get("GLIBC_TUNABLES", ""):
        from .hugepages import collapse_anonymous_memory

        collapse_anonymous_memory()
    # Job n's learner uid is 1000 + 2n: past MAX_JOBS it would reach the
    # uids the image reserves (65534, nobody).
    max_jobs = min(MAX_JOBS, max(1, int(os.environ.get("DOJO_MAX_JOBS") or 1)))
    # A pre-started (pooled) container that no job comes for ends by itself.
    idle_s = float(os.environ.get("DOJO_IDLE_S") or 0)
    # Warm: the pool lends this container only from now on (``sandbox.pool``).
    report_stream.write("@@DOJO-READY 0\n")
    report_stream.flush()
    for number in range(1, max_jobs + 1):
        # The job process is forked, and forks its launcher and first fork
        # server, before the job arrives: that work is off the learner's wait.
        report_stream.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = run_job(number, report_stream, idle_s)
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code == NO_MORE_JOBS or number == max_jobs:
            return 0
        if code != JOB_REPORTED:
            print(f"the job process ended without its report (status {code})", file=sys.stderr, flush=True)
            return 0
        problems = recycle(HARNESS_UID, learner_uid(number))
        if problems:
            # Something of the job survived: this container serves no other.
            print("container not reusable: " + "; ".join(problems), file=sys.stderr, flush=True)
            return 0
        report_stream.write(f"@@DOJO-READY {number}\n")
        report_stream.flush()
    return 0


def run_job(number: int, report_stream: IO[str], idle_s: float = 0) -> int:
    """In a fresh fork of the master: start the launcher, read one job, grade it, report.

    NO_MORE_JOBS when stdin ends, or no job comes within ``idle_s`` (a
    pre-started container nobody took ends by itself).
    """
    uid = learner_uid(number)
    _prepare_dirs(uid)
    # The launcher is forked before the job arrives (and before any thread
    # starts): it keeps root's power to start and kill learner processes
    # after this process has dropped it, and it (with every fork server it
    # starts) holds nothing of the job. The learner's output goes to pipes
    # drained here.
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()

    def close_in_launcher() -> None:
        report_stream.close()
        os.close(out_read)
        os.close(err_read)

    launcher = fork_launcher(uid, LEARNER_ENV, out_write, err_write, close_in_launcher)
    os.close(out_write)
    os.close(err_write)
    control = launcher.start()

    if idle_s > 0 and not select.select([0], [], [], idle_s)[0]:
        return NO_MORE_JOBS
    raw_payload = read_frame(0)
    if raw_payload is None:
        return NO_MORE_JOBS
    started = time.monotonic()
    payload = json.loads(raw_payload)
    emitter = Emitter(str(payload["nonce"]), report_stream)
    flood = threading.Event()
    limits = payload.get("limits", {})
    output_limit = int(limits.get("output_bytes", 1024 * 1024))
    taps = (
        OutputTap(out_read, output_limit, flood),
        OutputTap(err_read, output_limit, flood),
    )
    memory = MemorySampler()
    try:
        _write_tests(dict(payload["tests"]), str(payload.get("reference") or ""))
        ooms = OomWatch(uid)
        _drop_privileges()
        os.chdir(WORK / "harness")
        # The tests' own helpers: ``import reference`` and ``grading.job_seed()``.
        sys.path.insert(0, str(TEST_DIR))
        os.environ["DOJO_SEED"] = str(int(payload.get("seed") or 0))
        report = _grade(payload, emitter, launcher, control, flood, taps, ooms, started)
        report["peak_memory_bytes"] = memory.stop()
    except ContainerTainted as exc:
        report = {"outcome": "infra_error", "message": f"The grader's container was not clean: {exc}"[:2000], "error_code": CONTAINER_TAINTED}
    except MemoryError:
        report = {"outcome": "memory_limit", "stopped": "results"}
    except Exception as exc:  # noqa: BLE001 - whatever broke, the host gets a report
        report = {"outcome": "infra_error", "message": f"The grader failed: {type(exc).__name__}: {exc}"[:2000], "error_code": "harness_crashed"}
    try:
        report["machine"] = machine.facts()
    except Exception:  # noqa: BLE001 - a result without its machine is still a result
        pass
    emitter.emit("report", **report)
    return JOB_REPORTED


def _grade(
    payload: dict[str, Any],
    emitter: Emitter,
    launcher: LauncherClient,
    control: socket.socket,
    flood: threading.Event,
    taps: tuple[OutputTap, OutputTap],
    ooms: OomWatch,
    started: float,
) -> dict[str, Any]:
    """Run the tests (twice for a Submit), and return the report's fields."""
    from .lean import lean_enough
    from .plugin import HarnessPlugin, RunState, TestRecord, all_passed, not_failed, run_tests
    from .proxy import Channel, FailureRecord, ServerDied, SolutionImportError, failure_record
    from .replay import merge_states, replay_tests
    from .rerun import RerunVerdict, judge_rerun
    from .tape import Recorder

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
        emitter.emit(
            "test", name=record.name, outcome=record.outcome, duration_s=round(record.duration_s, 4), message=record.message if is_run else "",
            failure=record.failure if is_run else None,
        )  # fmt: skip

    def check_server(state: RunState, channel: Channel) -> None:
        # A learner that kills its fork server (os.kill(os.getppid(), 9)) may
        # still answer every call from its orphaned child: the run must not
        # count as passed, and nothing after it can be trusted.
        if state.learner_died is None and not channel.server_alive():
            state.learner_died = ServerDied(None)

    channel = Channel(control, deadline=run_started + time_s, abort=flood)
    # A Submit's first run tapes each test's calls; its re-run replays them.
    recorder = Recorder() if payload.get("isolate") else None
    shared = run_tests(str(TEST_DIR), HarnessPlugin(channel, source, fresh=False, stop=stop, on_test=on_test, recorder=recorder))
    check_server(shared, channel)
    calls = channel.calls
    rerun: RerunVerdict | None = None
    replayed = 0
    # The learner's processes outlived the re-run's reset (one that takes
    # longer than the job's time to die): the learner's timeout, never ours.
    stuck = False
    fatal = shared.timed_out or flood.is_set() or shared.learner_died is not None or shared.import_error is not None
    if recorder is not None and not fatal and not shared.collect_errors:
        # Re-run every test in a fresh learner process, with its own budget,
        # after killing everything the first run left and under a new fork
        # server on a new channel: a test whose result changes depends on
        # state kept between calls.
        # When the first run failed, the grade is settled: only its failed
        # tests run again, to say which of them pass on their own; a failed
        # test whose replay answers the same fails on its own too.
        failed = frozenset(name for name, record in shared.tests.items() if not not_failed(record.outcome)) or None
        # The host shows every test of the first run before this phase's wait.
        emitter.emit("rerun")
        control.close()
        # A job whose code, tests and reference never name torch or numpy
        # gets a server without them: each fresh process costs about 1.5 ms
        # of CPU instead of 3.5 (``lean``).
        lean = lean_enough(source, [*dict(payload["tests"]).values(), str(payload.get("reference") or "")])
        # The reset waits for the first run's processes to die out of the
        # re-run's own time: a process that takes longer is the learner's.
        rerun_deadline = time.monotonic() + time_s
        try:
            fresh_control = launcher.reset(lean=lean, wait_s=time_s)
        except LauncherFailed:
            stuck = True
        else:
            fresh_channel = Channel(fresh_control, deadline=rerun_deadline, abort=flood)
            # Each test's tape is replayed to a fresh process (a failed run's
            # failed tests only); the rest, and any whose replay differs, run
            # for real.
            fresh, real_only = replay_tests(fresh_channel, source, recorder, shared, stop, only=failed)
            replayed = len(fresh.tests)
            if real_only and not fresh.timed_out and not flood.is_set():
                real = run_tests(str(TEST_DIR), HarnessPlugin(fresh_channel, source, fresh=True, stop=stop, only=real_only))
                fresh = merge_states(fresh, real)
            check_server(fresh, fresh_channel)
            calls += fresh_channel.calls
            rerun = judge_rerun(shared, fresh, only=failed)
            if failed is not None and rerun.outcome is not None:
                # An explanation that could not finish explains nothing, and the
                # failed grade stands as it is (never "passed its first run").
                rerun = RerunVerdict()
    run_s = time.monotonic() - run_started
    # Everything the learner printed before its last answer is in the pipes.
    for tap in taps:
        tap.settle()

    ooms.check_alone()
    new_ooms = ooms.new_kills()
    tests = sorted(shared.tests.values(), key=lambda record: record.order)
    # A limit's outcome carries facts (where it stopped, the limit), not
    # sentences: the host words them (grader.messages).
    message, stopped, limit = "", "", 0.0
    failure: FailureRecord | None = None
    if stuck:
        outcome, stopped, limit = "timeout", "processes", time_s
        rerun = RerunVerdict(outcome, failure="timeout")
    elif shared.timed_out:
        outcome, stopped, limit = "timeout", "loading" if shared.load_timed_out else "", time_s
    elif flood.is_set():
        outcome, limit = "output_limit", output_limit
    elif new_ooms > 0:
        outcome = "memory_limit"
    elif shared.import_error is not None:
        outcome, failure = "error", failure_record(SolutionImportError.code, traceback=shared.import_error)
    elif shared.learner_died is not None:
        outcome, failure = "error", shared.learner_died.failure(str(getattr(shared.learner_died, "learner_traceback", ""))[:4000])
    elif shared.collect_errors or not tests:
        outcome, message = "infra_error", "The tests could not be collected: " + "; ".join(shared.collect_errors)[:2000]
    elif rerun is not None and rerun.outcome is not None:
        outcome, message = rerun.outcome, rerun.message
    elif all_passed(tests):
        outcome = "passed"
    else:
        outcome = "failed"
    # A rung that grades speed measures it once every test passed (``speed``).
    speed: dict[str, Any] | None = None
    if outcome == "passed" and recorder is not None and payload.get("speed"):
        from .speed import run_speed_phase

        speed = run_speed_phase(payload, launcher, source, lean_enough(source, [str(dict(payload["speed"]).get("baseline") or "")]))
    stdout_tap, stderr_tap = taps
    return {
        "speed": speed,
        "outcome": outcome,
        "message": message[:4000],
        "failure": failure,
        "stopped": stopped,
        "limit": limit,
        "tests": [record.__dict__ for record in tests],
        "state_leaks": rerun.leaky if rerun is not None else [],
        "passes_alone": rerun.passes_alone if rerun is not None else [],
        "stdout": stdout_tap.text() if payload.get("show_output") else "",
        "stderr": stderr_tap.text() if payload.get("show_output") else "",
        "output_bytes": stdout_tap.total + stderr_tap.total,
        "run_s": round(run_s, 3),
        "hidden_calls": calls,
        "rerun_failure": rerun.failure if rerun is not None and outcome == rerun.outcome else "",
        "rerun_replayed": replayed,
        # An error the container may serve another job after: the learner's
        # module failed to load, said so, and nothing else went wrong (its
        # fork server alive, no process of its lost). Any other error is
        # an anomaly (``sandbox.runner``).
        "load_error": outcome == "error" and shared.import_error is not None and shared.learner_died is None and rerun is None,
    }
