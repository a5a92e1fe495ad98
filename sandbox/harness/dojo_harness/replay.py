"""The re-run of a Submit, by replay: each test's calls again, each test in a fresh process.

For each test the first run taped (``tape``), a fresh learner process loads
the code and is sent the test's requests, as they were sent the first time;
its replies must be the same, byte for byte (handle ids renumbered). Then
the first run's execution of that test is one the test could have had in a
fresh process, and its outcome stands for the re-run. A test whose replay
differs, fails, or cannot be replayed runs again for real, as before replay
existed. A failed Submit's re-run replays only its failed tests: one that
replays the same fails on its own too, and only one that differs runs for
real, to say whether it passes alone. docs/security.md ("The re-run replays
each test") gives the whole argument.
"""

from __future__ import annotations

from collections.abc import Callable

from .plugin import RunState, TestRecord
from .proxy import Channel, JobTimeout, LearnerDied, LearnerSession, SolutionImportError
from .tape import Recorder, Tape, renumber, reply_digest


def replay_tape(channel: Channel, source: str, tape: Tape) -> bool:
    """Whether a fresh learner process answers every call of ``tape`` as the first run's did.

    JobTimeout and OutputFlood pass through: they end the whole re-run.
    """
    try:
        session = LearnerSession(channel, source)
    except SolutionImportError:
        return False
    except LearnerDied:
        return False
    try:
        if session.load_digest != tape.load_digest:
            return False
        ordinals: dict[int, int] = {}  # the fresh process's handle ids, by order of first appearance
        fresh_ids: dict[int, int] = {}  # ordinal -> the fresh process's id
        for call in tape.calls:
            frame = call.frame
            if call.refs:
                # An object the first run's replies had made by now and this
                # process's have not: its answers differ.
                if any(tape.ordinals[ref] not in fresh_ids for ref in call.refs):
                    return False
                mapping = {ref: fresh_ids[tape.ordinals[ref]] for ref in call.refs}
                if any(ref != fresh for ref, fresh in mapping.items()):
                    frame = renumber(frame, mapping)
            body, reply = session.exchange(frame, call.call_id)
            if reply_digest(body, reply, ordinals) != call.digest:
                return False
            fresh_ids.update((ordinal, handle) for handle, ordinal in ordinals.items())
        return True
    except LearnerDied:
        return False
    finally:
        session.end()


def replay_tests(
    channel: Channel, source: str, recorder: Recorder, shared: RunState, stop: Callable[[], str | None], only: frozenset[str] | None = None
) -> tuple[RunState, frozenset[str]]:
    """Replay the taped tests of ``shared`` (those named in ``only``, if given);
    the state of those that matched, and the names to run for real.

    After the first replay that differs, no other test is replayed: code
    whose answers change from process to process (it keeps state, or reads
    the clock) would otherwise pay for each test twice, replayed and then
    run, and a re-run that had fit in the time limit could run out of it.
    """
    state = RunState()
    rest: set[str] = set()
    differed = False
    for name, record in sorted(shared.tests.items(), key=lambda item: item[1].order):
        if only is not None and name not in only:
            continue
        if stop() is not None:
            break
        if recorder.untouched(name):
            state.tests[name] = TestRecord(name=name, outcome=record.outcome, message=record.message, order=record.order, failure=record.failure)
            continue
        tape = None if differed else recorder.tape(name)
        if tape is None:
            rest.add(name)
            continue
        try:
            replayed = replay_tape(channel, source, tape)
        except JobTimeout:
            state.timed_out = True
            break
        if replayed:
            state.tests[name] = TestRecord(name=name, outcome=record.outcome, message=record.message, order=record.order, failure=record.failure)
        else:
            differed = True
            rest.add(name)
    return state, frozenset(rest)


def merge_states(replayed: RunState, real: RunState) -> RunState:
    """The re-run's state: the replayed tests and those that ran again for real."""
    replayed.tests.update(real.tests)
    replayed.timed_out = replayed.timed_out or real.timed_out
    replayed.load_timed_out = real.load_timed_out
    replayed.import_error = real.import_error
    replayed.learner_died = real.learner_died
    replayed.collect_errors = real.collect_errors
    return replayed


__all__ = ["merge_states", "replay_tape", "replay_tests"]
