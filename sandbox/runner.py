"""Run one job in a locked-down container and read back its report.

The runner never trusts the container: the job goes in on stdin (no host
mount), the report comes back on the container's attached stdout as lines
that must carry this job's nonce, every size is capped, and the wall clock
is enforced from here by killing the container. A pooled container serves
up to ``reuse_jobs`` jobs (see ``sandbox.pool``); any other ends with its job.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import docker
import docker.errors

from . import errors, host
from .cleanup import POOL_MAX_IDLE_S, remove_stale_containers
from .container import LABEL, container_options, cpuset_for, engine_grants
from .jobs import MAX_TEST_MESSAGE, Job, JobResult, Limits
from .pool import ContainerPool, Launched, launch
from .report import clean_text, parse_event, parse_report, parse_test, seconds
from .vouch import vouch

log = logging.getLogger(__name__)

# Seconds from starting the container to the harness holding the job (its
# imports, mostly). Running out is ours (a slow or overloaded worker), not a
# learner's timeout: no learner code has run yet.
STARTUP_S = 25.0
# Seconds allowed on top of the job's own limit, counted from the harness
# holding the job, for the report, before the runner kills the container.
GRACE_S = 15.0
MAX_LOG_BYTES = 8 * 1024 * 1024

# Seconds a container's harness has, after a report, to say it removed the
# job's leftovers (``@@DOJO-READY``); silence throws the container away.
READY_WAIT_S = 10.0
# Outcomes after which a container may serve another job: the job ended as
# a learner's job normally does, or as an ``error`` that the harness says is
# the learner's module failing to load and nothing else (``load_error``).
# Anything else (a timeout, the memory or output limit, a killed fork
# server or child, our own failure) is an anomaly, and the container goes
# with its job.
REUSABLE_OUTCOMES = ("passed", "failed")

# Events passed to ``on_event``: ("container", {"id"}) once the container
# exists, ("running", {}) once the harness has the job, ("test", {...}) per test.
EventCallback = Callable[[str, dict[str, Any]], None]


class _Watchdog:
    """Kills the container when the wall clock runs out; the deadline can move."""

    def __init__(self, container: Any, seconds: float) -> None:
        self.fired = False
        self._deadline = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._container = container
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                break
            # Short slices: restart() may move the deadline closer.
            if self._done.wait(min(remaining, 0.25)):
                return
        self.fired = True
        try:
            self._container.kill()
        except docker.errors.DockerException:
            pass

    def restart(self, seconds: float) -> None:
        with self._lock:
            self._deadline = time.monotonic() + seconds

    def cancel(self) -> None:
        self._done.set()


class SandboxRunner:
    """Runs jobs in containers: a pre-started one from ``pool`` when it has
    one with the job's limits, else one started now for this job alone.

    A pooled container serves up to ``reuse_jobs`` jobs, one at a time, each
    under a fresh learner uid, and only after its harness has removed and
    checked the removal of everything the last one left. Under gVisor
    (``runtime="runsc"``) every container serves one job: there the
    runtime's own seccomp filter replaces ours and lets learner code create
    SysV and POSIX IPC objects that nothing inside can list.

    ``first_core`` pins every container of this runner to that host core
    (and the next ones, for a job that wants more than one CPU): a Celery
    worker's slot i grades on core i, so two slots never share a core while
    another idles, and a job's processes never bounce between cores. None
    (commands and tests that run several jobs at once from one runner)
    leaves placement to the kernel.

    ``huge_pages``: the harness's heap in transparent huge pages
    (``container_options``); cheaper forks, on by default.

    ``cleanup_in_background`` returns or removes a finished job's container
    after ``run`` has returned (saving that from the learner's wait); tests
    that check what survives a job keep it off.
    """

    def __init__(
        self,
        image: str,
        *,
        gpu_enabled: bool = False,
        gpu_device: str = "0",
        runtime: str = "",
        docker_timeout: int = 60,
        startup_s: float = STARTUP_S,
        grace_s: float = GRACE_S,
        pool_size: int = 0,
        pool_limits: Limits | None = None,
        pool_owner: str = "",
        cleanup_in_background: bool = False,
        reuse_jobs: int = 1,
        first_core: int | None = None,
        huge_pages: bool = True,
    ) -> None:
        self.image = image
        self.gpu_enabled = gpu_enabled
        self.gpu_device = gpu_device
        self.runtime = runtime
        self._oom_floor: bool | None = None
        self.docker_timeout = docker_timeout
        self.startup_s = startup_s
        self.grace_s = grace_s
        self.cleanup_in_background = cleanup_in_background
        self.reuse_jobs = 1 if runtime == "runsc" else max(1, reuse_jobs)
        # Where this runner's containers are pinned (``cpuset_for``); None: anywhere.
        self.first_core = first_core
        self.huge_pages = huge_pages
        self._host_cores: int | None = None
        self.pool: ContainerPool | None = None
        if pool_size > 0:
            self.pool = ContainerPool(
                self._pool_options, pool_limits or Limits(), pool_size, max_jobs=self.reuse_jobs, client_factory=self._client,
                owner=pool_owner, max_idle_s=POOL_MAX_IDLE_S,
            ).start()  # fmt: skip

    def _options(self, job: Job) -> dict[str, Any]:
        if self._oom_floor is None:
            self._oom_floor = engine_grants(self._client(), self.image, "SYS_RESOURCE")
            if not self._oom_floor:
                log.warning("this Docker engine cannot grant SYS_RESOURCE: learner processes run without an oom_score_adj floor")
        cpuset = ""
        if self.first_core is not None:
            if self._host_cores is None:
                # The engine's cores, not this process's: a worker in a container may see fewer.
                self._host_cores = int(self._client().info().get("NCPU") or 0)
            cpuset = cpuset_for(self.first_core, self._host_cores, job.limits.cpus)
        return container_options(
            self.image, job, gpu_enabled=self.gpu_enabled, runtime=self.runtime, oom_floor=self._oom_floor, gpu_device=self.gpu_device,
            cpuset=cpuset, huge_pages=self.huge_pages,
        )  # fmt: skip

    def _container_limits(self, limits: Limits) -> Limits:
        """``limits`` as far as they shape the container this runner starts.

        Where the runner has no GPU, a rung that prefers one runs on the CPU
        in the same container as any other (``container_options`` attaches a
        device only when both ask): it takes a warm one, where it used to
        start every job cold, two seconds of torch import later.
        """
        return limits if self.gpu_enabled or not limits.gpu else replace(limits, gpu=False)

    def _pool_options(self, job: Job) -> dict[str, Any]:
        options = self._options(job)
        # The harness in a pre-started container exits if no job comes.
        options["environment"] = {**options["environment"], "DOJO_IDLE_S": str(int(POOL_MAX_IDLE_S + 60))}
        return options

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()

    def _client(self) -> docker.DockerClient:
        return docker.from_env(timeout=self.docker_timeout)

    def run(self, job: Job, on_event: EventCallback | None = None) -> JobResult:
        started = time.monotonic()
        nonce = secrets.token_hex(16)
        launched = self.pool.take(self._container_limits(job.limits), hidden=job.isolate) if self.pool is not None else None
        if launched is None:
            try:
                launched = launch(self._client(), self._options(job))
            except docker.errors.ImageNotFound:
                return JobResult(outcome="infra_error", error_code=errors.IMAGE_MISSING, message=f"sandbox image {self.image} is not built")
            except docker.errors.DockerException as exc:
                return JobResult(outcome="infra_error", error_code=errors.DOCKER_UNAVAILABLE, message=f"Docker is unavailable: {exc}"[:500])
        container = launched.container
        reusable = False
        try:
            if on_event:
                on_event("container", {"id": str(container.id)})
            reused = launched.jobs > 0
            result = self._run_container(launched, job, nonce, started, on_event)
            # Once learner code has seen hidden inputs here, the container serves Submits only (``Launched.saw_hidden``).
            launched.saw_hidden = launched.saw_hidden or (job.isolate and result.hidden_calls_made)
            result.timings["warm"] = launched.warm
            result.timings["reused"] = reused
            # The host's CPU, read here and never from the report (``sandbox.host``): speed boards group by it.
            if cpu := host.cpu_model():
                result.machine["host_cpu"] = cpu
            reusable = "run_s" in result.timings and (
                result.outcome in REUSABLE_OUTCOMES or (result.outcome == "error" and result.load_error and not result.hidden_calls_made)
            )
            return result
        except docker.errors.DockerException as exc:
            log.warning("sandbox job failed on Docker: %s", exc)
            return JobResult(outcome="infra_error", error_code=errors.DOCKER_FAILED, message=f"Docker failed during the job: {exc}"[:500])
        finally:
            if self.cleanup_in_background:
                threading.Thread(target=self._finish, args=(launched, reusable), daemon=True).start()
            else:
                self._finish(launched, reusable)

    def stop(self, container_id: str) -> None:
        try:
            self._client().containers.get(container_id).kill()
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:  # e.g. it is not running any more
            log.info("could not stop sandbox container %s: %s", container_id[:12], exc)

    def _finish(self, launched: Launched, reusable: bool = False) -> None:
        """Give a pooled container back for its next job once its harness says it is
        clean; remove any other (and let the pool refill)."""
        pooled = launched.warm and self.pool is not None
        if pooled and reusable and launched.jobs < launched.max_jobs and launched.wait_ready(READY_WAIT_S):
            assert self.pool is not None
            self.pool.give_back(launched, reusable=True)
            return
        launched.discard()
        if pooled:
            assert self.pool is not None
            self.pool.give_back(launched, reusable=False)

    def _run_container(self, launched: Launched, job: Job, nonce: str, started: float, on_event: EventCallback | None) -> JobResult:
        container = launched.container
        payload = json.dumps(
            {
                "nonce": nonce,
                "mode": job.mode,
                "source": job.source,
                "tests": job.tests,
                "limits": {"time_s": job.limits.time_s, "output_bytes": job.limits.output_kb * 1024},
                "show_output": job.show_output,
                "isolate": job.isolate,
                "seed": job.seed,
                "reference": job.reference,
                "speed": job.speed if job.isolate else None,
            }
        ).encode()
        created_s = time.monotonic() - started
        launched.send_job(payload)
        # Two clocks: start-up, then the job's own budget from the moment the
        # harness holds the job (Submit runs the tests twice).
        watchdog = _Watchdog(container, self.startup_s)
        budget = job.limits.time_s * (2 if job.isolate else 1) + self.grace_s
        if job.speed and job.isolate:
            # The speed phase's own budget, and the channel's as much again (``speed``).
            budget += 2 * float(job.speed.get("budget_s") or 0)
        try:
            report, harness_started_s = self._read_events(launched, nonce, on_event, started, lambda: watchdog.restart(budget))
        finally:
            watchdog.cancel()
        total_s = time.monotonic() - started
        timings = {"container_start_s": round(created_s, 4), "total_s": round(total_s, 3)}
        if harness_started_s is not None:
            timings["harness_ready_s"] = round(harness_started_s, 3)
        if report is None:
            # NOTE: only here does the runner wait for the container to stop:
            # with a report in hand it is removed at once (whatever the
            # learner left running dies with it), which saves the interpreter
            # shutdown on every job.
            try:
                state = container.wait(timeout=10)
            except Exception:  # noqa: BLE001 - a wait timeout is not a reason to lose the verdict
                state = {}
            container.reload()
            oom_killed = bool(container.attrs.get("State", {}).get("OOMKilled"))
            if watchdog.fired and harness_started_s is None:
                log.warning("sandbox harness did not start within %s s", self.startup_s)
                return JobResult(outcome="infra_error", error_code=errors.START_TIMEOUT, timings=timings)
            if watchdog.fired:
                return JobResult(outcome="timeout", limit=job.limits.time_s, timings=timings)
            if oom_killed:
                return JobResult(outcome="memory_limit", timings=timings)
            log.warning("sandbox produced no report (exit %s)", state.get("StatusCode"))
            stderr = clean_text(container.logs(stdout=False, stderr=True, tail=40)[-4000:].decode("utf-8", "replace"), MAX_TEST_MESSAGE)
            return JobResult(outcome="infra_error", error_code=errors.REPORT_MISSING, stderr=stderr, timings=timings)
        result = parse_report(report)
        result.timings = {**timings, "run_s": seconds(report.get("run_s"))}
        # The host's own check of a pass, whatever the report says.
        return vouch(result, job)

    def _read_events(
        self, launched: Launched, nonce: str, on_event: EventCallback | None, started: float, on_started: Callable[[], None]
    ) -> tuple[dict[str, Any] | None, float | None]:
        """This job's events from the container's stdout, up to its report (None: no report)."""
        prefix = f"@@DOJO {nonce} ".encode()
        total = 0
        harness_started_s: float | None = None
        for line in launched.lines(MAX_LOG_BYTES):
            total += len(line) + 1
            if total > MAX_LOG_BYTES:
                launched.container.kill()
                break
            event = parse_event(line, prefix)
            if event is None:
                continue
            kind = event.get("event")
            if kind == "report":
                # The report is the harness's last word on this job: stop reading here.
                return event, harness_started_s
            if kind == "started" and harness_started_s is None:
                harness_started_s = time.monotonic() - started
                on_started()
                if on_event:
                    on_event("running", {})
            elif kind == "test" and on_event:
                test = parse_test(event)
                if test is not None:
                    on_event("test", {"name": test.name, "outcome": test.outcome, "duration_s": test.duration_s, "message": test.message, "failure": test.failure})
            elif kind == "rerun" and on_event:
                # A Submit's first run is over; its isolated re-run begins.
                on_event("rerun", {})
        return None, harness_started_s


# Importers from before the split keep working.
__all__ = ["GRACE_S", "LABEL", "STARTUP_S", "SandboxRunner", "container_options", "remove_stale_containers"]
