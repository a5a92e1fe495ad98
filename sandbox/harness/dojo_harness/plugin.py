"""The pytest plugin the harness loads: the ``solution`` fixture and a recorder."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field

import pytest

from .proxy import (
    Channel,
    ChannelBroken,
    FailureRecord,
    InvalidReturn,
    JobTimeout,
    LearnerDied,
    LearnerSession,
    OutputFlood,
    SolutionImportError,
    SolutionProxy,
    ValueTooLarge,
    failure_record,
)
from .tape import Recorder

MAX_MESSAGE = 4000
# A test that skips itself (a GPU-only check where the sandbox has no GPU) does
# not fail a job; a job needs at least one passed test. Learner code cannot
# skip a test: the tests run here, and its exceptions arrive rebuilt as builtins.
NOT_FAILED = ("passed", "skipped")


def not_failed(outcome: str) -> bool:
    return outcome in NOT_FAILED


def all_passed(records: Iterable[TestRecord]) -> bool:
    """Every test passed or skipped itself, and at least one passed."""
    outcomes = [record.outcome for record in records]
    return all(not_failed(outcome) for outcome in outcomes) and "passed" in outcomes



@dataclass
class TestRecord:
    name: str
    outcome: str = "passed"
    duration_s: float = 0.0
    message: str = ""
    order: int = 0
    # Why the learner's code failed it (``proxy.failure_record``), when it did.
    failure: FailureRecord | None = None


@dataclass
class RunState:
    """What one pytest run learned; read by ``main`` after the run."""

    tests: dict[str, TestRecord] = field(default_factory=dict)
    import_error: str | None = None
    learner_died: LearnerDied | None = None
    timed_out: bool = False
    # The time ran out while the learner's module was loading (its top-level
    # code), before any test could call it: no test is to blame.
    load_timed_out: bool = False
    collect_errors: list[str] = field(default_factory=list)


def _describe(excinfo: pytest.ExceptionInfo[BaseException]) -> tuple[str, FailureRecord | None]:
    """A failed test's message (the exception as the test saw it) and, when
    the learner's code is to blame, the facts of its failure: the host words
    them (grader.messages), the harness writes no sentence."""
    exc = excinfo.value
    learner_tb = str(getattr(exc, "learner_traceback", ""))[:MAX_MESSAGE]
    if isinstance(exc, SolutionImportError | InvalidReturn | ValueTooLarge):
        return "", exc.failure()
    if isinstance(exc, LearnerDied):
        return "", exc.failure(learner_tb)
    # The harness's own exceptions need no module path.
    message = (str(exc) if type(exc).__module__.startswith("dojo_harness") else excinfo.exconly())[:MAX_MESSAGE]
    return message, failure_record("raised", traceback=learner_tb) if learner_tb else None


class HarnessPlugin:
    """Provides ``solution`` and records each test's outcome.

    ``fresh=True`` gives every test its own learner process (used to detect
    state kept between tests); otherwise one process serves the whole run.
    ``only``: run just the tests of these names (the others are deselected).
    ``recorder`` (a Submit's first run): tape each test's calls for the re-run.
    """

    def __init__(
        self,
        channel: Channel,
        source: str,
        *,
        fresh: bool,
        stop: Callable[[], str | None],
        on_test: Callable[[TestRecord], None] | None = None,
        only: frozenset[str] | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        self.only = only
        self.recorder = recorder
        self.channel = channel
        self.source = source
        self.fresh = fresh
        self.stop = stop
        self.on_test = on_test
        self.state = RunState()
        self._shared: LearnerSession | None = None

    def _open(self) -> LearnerSession:
        try:
            return LearnerSession(self.channel, self.source, None if self.fresh else self.recorder)
        except SolutionImportError as exc:
            self.state.import_error = str(exc)
            raise
        except JobTimeout:
            self.state.load_timed_out = True
            raise

    @pytest.fixture
    def solution(self, request: pytest.FixtureRequest) -> Iterator[SolutionProxy]:
        if self.state.import_error is not None:
            raise SolutionImportError({"traceback": self.state.import_error})
        if self.fresh:
            session = self._open()
            try:
                yield SolutionProxy(session)
            finally:
                session.end()
            return
        if self._shared is None or self._shared.ended:
            self._shared = self._open()
        if self.recorder is None:
            yield SolutionProxy(self._shared)
            return
        # Each test looks its functions up anew, as it would in a fresh process:
        # its tape then holds every request a fresh process would be sent.
        self._shared.forget_callables()
        self.recorder.start(request.node.name, self._shared.load_digest)
        try:
            yield SolutionProxy(self._shared)
        finally:
            self.recorder.stop()

    def close(self) -> None:
        if self._shared is not None:
            try:
                self._shared.end()
            except ChannelBroken as exc:
                # Junk on the channel is the learner's doing even when it
                # surfaces only as the session ends.
                if self.state.learner_died is None:
                    self.state.learner_died = exc
            except JobTimeout:
                # The server never said the last session ended (stopped, or
                # too slow): the job's time ran out on the learner's side.
                self.state.timed_out = True
            except (LearnerDied, OutputFlood, OSError):
                pass

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.excinfo is not None:
            exc = call.excinfo.value
            if isinstance(exc, JobTimeout):
                self.state.timed_out = True
            elif isinstance(exc, LearnerDied):
                self.state.learner_died = exc
        if report.when == "call" or report.outcome != "passed":
            record = self.state.tests.setdefault(item.name, TestRecord(name=item.name, order=len(self.state.tests)))
            record.duration_s += report.duration
            if report.failed:
                record.outcome = "failed" if report.when == "call" else "error"
                if call.excinfo is not None:
                    record.message, record.failure = _describe(call.excinfo)
                if isinstance(call.excinfo.value if call.excinfo else None, JobTimeout):
                    # The host words it, knowing whether the module was still loading.
                    record.outcome, record.message, record.failure = "timeout", "", None
            elif report.skipped:
                record.outcome = "skipped"
        return report

    def pytest_runtest_logfinish(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        name = nodeid.rsplit("::", 1)[-1]
        record = self.state.tests.get(name)
        if record is not None and self.on_test is not None:
            self.on_test(record)

    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
        if self.only is None:
            return
        deselected = [item for item in items if item.name not in self.only]
        items[:] = [item for item in items if item.name in self.only]
        if deselected:
            config.hook.pytest_deselected(items=deselected)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.state.collect_errors.append(str(report.longrepr)[:MAX_MESSAGE])

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        reason = self.stop()
        if reason is not None or self.state.timed_out or self.state.learner_died is not None:
            item.session.shouldstop = reason or "stopped"
            return True
        return None


# pytest's own plugins the harness leaves out. Caches and reports nobody
# reads; and plugins that only watch the harness's own process (its logging,
# warnings, faults and unraisable exceptions): the learner's code runs
# elsewhere, so they add per-test work and tell nobody anything. The
# unraisable-exception plugin alone runs ``gc.collect()`` several times at
# the end of every session, each a walk over torch's objects. The bench's
# throughput floor leaves out the same ones (``bench/bench.py``).
SKIPPED_PLUGINS = (
    "cacheprovider", "stepwise", "legacypath",
    "logging", "warnings", "faulthandler", "unraisableexception", "threadexception",
    "doctest", "junitxml", "pastebin",
)  # fmt: skip


def skipped_plugin_args() -> list[str]:
    """``-p no:NAME`` for each of ``SKIPPED_PLUGINS``."""
    return [arg for name in SKIPPED_PLUGINS for arg in ("-p", f"no:{name}")]


def run_tests(test_dir: str, plugin: HarnessPlugin, extra_args: list[str] | None = None, extra_plugins: list[object] | None = None) -> RunState:
    args = [
        test_dir,
        "-q",
        *skipped_plugin_args(),
        "--noconftest",
        "--capture=sys",
        "--import-mode=importlib",
        "--rootdir", test_dir,
        "-c", "/opt/harness/pytest.ini",
        "-o", "python_files=test_*.py",
        *(extra_args or []),
    ]
    try:
        pytest.main(args, plugins=[plugin, *(extra_plugins or [])])
    finally:
        plugin.close()
    return plugin.state


__all__ = ["MAX_MESSAGE", "SKIPPED_PLUGINS", "HarnessPlugin", "RunState", "TestRecord", "run_tests", "skipped_plugin_args"]


