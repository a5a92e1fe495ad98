"""Between two jobs of one container: remove everything the first left, and prove it.

Run by the job master (root, but without CAP_KILL, CAP_DAC_OVERRIDE or
CAP_FOWNER: it can signal and delete only what its own uid owns). So each
uid of the finished job is cleaned up in a fork that acts as it
(``identity.act_on``: the uid as its effective uid, a uid no process runs
as for its real and saved ones, so no process of the job can signal it):

1. ``kill(-1, SIGKILL)`` as root (the job's root processes: its job process
   and launcher), then as the harness uid and as the job's learner uid.
   ``kill(-1)`` reaches every process the caller may signal but itself and
   PID 1, atomically against fork; no process can change its uid (no
   capability, ``no-new-privileges``, no setuid binary), so every process
   of the job is reached. Repeated until ``/proc`` shows none alive: no
   thread of any process (a process whose main thread ended alone shows
   as a zombie while its other threads run).
2. Each uid deletes its own files in the writable places (``/tmp``,
   ``/dev/shm``, ``/work``), restoring permissions it had taken from
   itself; root then removes the job's now empty folders under ``/work``.
   It does so in the same fork as its kill, once ``/proc`` shows no live
   process of that uid: a process killed in the middle of a system call
   finishes the call before it dies (a file it was creating appears after
   the kill), and a dead one writes nothing. Only if a process outlived
   the first round does each uid delete its files once more, after all are
   dead. One fork per uid instead of two: each fork of the master (a
   torch-sized process) costs milliseconds of page-table copying.
3. Checks, as root: no process but PID 1 and the master, and the
   container's pids cgroup counting exactly their tasks (nothing ``/proc``
   does not show, no thread anywhere); ``/tmp``,
   ``/dev/shm`` and ``/work`` empty; no SysV IPC object
   (``/proc/sysvipc``: refused by the seccomp profile anyway); no named or
   abstract Unix socket (``/proc/net/unix``; a socket dies with the last
   process holding it). POSIX message queues are refused by the seccomp
   profile and ``/dev/mqueue`` is checked empty. No IP socket of any kind
   (``/proc/net/sockstat``: TCP, UDP, raw, v4 and v6): a closed TCP
   connection stays in TIME_WAIT for a minute after every process is
   gone, its loopback addresses and ports chosen by the code that made it,
   so the next job could read what this one saw there. The seccomp
   profile refuses IP sockets under runc; under gVisor (its own filter)
   this check is what keeps the next job from them.

Any check that fails is a problem: the master then serves no further job
and the host throws the container away.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from .identity import act_on
from .scrub import kill_others_of_this_uid, kill_until_gone, live_processes, remove_entry

WRITABLE = (Path("/tmp"), Path("/dev/shm"), Path("/work"))
MQUEUE = Path("/dev/mqueue")
# Every table of IP sockets the kernel keeps for this network namespace,
# and their lines in /proc/net/sockstat{,6}.
IP_SOCKET_TABLES = ("tcp", "tcp6", "udp", "udp6", "udplite", "udplite6", "raw", "raw6")
IP_SOCKET_KINDS = ("TCP", "UDP", "UDPLITE", "RAW", "TCP6", "UDP6", "UDPLITE6", "RAW6")
KILL_ROUNDS = 50
# How long one uid's fork waits for the processes it killed to be gone
# before it deletes their files anyway (a process stuck in the kernel); the
# master's next round, and the second deletion, see to the rest.
DEATH_WAIT_S = 1.0


# The container's pids cgroup (v1, then v2): every task in it, ours included.
PIDS_CURRENT = (Path("/sys/fs/cgroup/pids/pids.current"), Path("/sys/fs/cgroup/pids.current"))
# How long the pids count may lag behind /proc: PID 1 reaps the killed.
PIDS_SETTLE_S = 1.0


def _live_processes() -> list[int]:
    """Pids of live processes (any thread not a zombie) other than PID 1 and this one."""
    return live_processes(exclude=(1, os.getpid()))


def pids_in_cgroup() -> int | None:
    """The container's pids cgroup count of tasks; None where it cannot be read (gVisor)."""
    for path in PIDS_CURRENT:
        try:
            return int(path.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return None


def _hidden_tasks() -> int:
    """Tasks the pids cgroup counts beyond PID 1's and this process's own (0: none).

    Killed processes count until PID 1 has reaped them: waited for, up to
    ``PIDS_SETTLE_S``. A task /proc does not show as alive (a thread
    whose leader is a zombie, anything else) is counted here all the same.
    """
    deadline = time.monotonic() + PIDS_SETTLE_S
    while True:
        _reap()
        counted = pids_in_cgroup()
        if counted is None:
            return 0
        ours = len(os.listdir("/proc/1/task")) + len(os.listdir("/proc/self/task"))
        extra = counted - ours
        if extra <= 0 or time.monotonic() > deadline:
            return max(extra, 0)
        time.sleep(0.005)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _as(uid: int, work: object) -> None:
    """Run ``work()`` in a fork that acts on ``uid`` out of its reach (``act_on``); wait for it."""
    pid = os.fork()
    if pid == 0:
        try:
            act_on(uid)
            work()  # type: ignore[operator]
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _wipe_own_files() -> None:
    """Delete every entry this uid can delete in the writable places, at any depth we own."""
    for folder in WRITABLE:
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            try:
                mine = entry.lstat().st_uid == os.geteuid()
            except OSError:
                continue
            if mine:
                remove_entry(entry)
            elif entry.is_dir() and not entry.is_symlink():
                # e.g. /work/harness (the harness's) holding nothing of ours: look inside.
                try:
                    inner = list(entry.iterdir())
                except OSError:
                    continue
                for item in inner:
                    try:
                        if item.lstat().st_uid == os.geteuid():
                            remove_entry(item)
                    except OSError:
                        continue


def _kill_wait_and_wipe() -> None:
    """As one uid: kill its processes, wait until none is alive, delete its files."""
    kill_until_gone(time.monotonic() + DEATH_WAIT_S)
    _wipe_own_files()


def _leftovers() -> list[str]:
    problems = []
    alive = _live_processes()
    if alive:
        problems.append(f"processes left: {alive[:10]}")
    hidden = _hidden_tasks()
    if hidden:
        problems.append(f"the pids cgroup counts {hidden} task(s) beyond PID 1's and the master's")
    for folder in (*WRITABLE, MQUEUE):
        try:
            names = sorted(entry.name for entry in folder.iterdir())
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"cannot list {folder}: {exc.strerror}")
            continue
        if names:
            problems.append(f"{folder} holds {names[:10]}")
    for kind in ("shm", "sem", "msg"):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except OSError:
            continue
        if len(lines) > 1:
            problems.append(f"SysV {kind} objects left: {len(lines) - 1}")
    try:
        sockets = Path("/proc/net/unix").read_text().splitlines()[1:]
    except OSError:
        sockets = []
    named = [line.split()[7] for line in sockets if len(line.split()) >= 8]
    if named:
        problems.append(f"named sockets left: {named[:10]}")
    left = ip_sockets_left()
    if left:
        problems.append(f"IP sockets left: {left}")
    return problems


def ip_sockets_left() -> dict[str, int]:
    """This network namespace's IP sockets, TIME_WAIT included, by kind (none: empty).

    From /proc/net/sockstat and sockstat6, whose counts are the
    namespace's own: reading /proc/net/tcp instead walks the host's whole
    TCP hash table, about 4 ms of CPU each for tcp and tcp6, every job.
    Where sockstat is missing, the tables themselves are read.
    """
    counts: dict[str, int] = {}
    try:
        lines = [*Path("/proc/net/sockstat").read_text().splitlines(), *Path("/proc/net/sockstat6").read_text().splitlines()]
    except OSError:
        for table in IP_SOCKET_TABLES:
            try:
                entries = len(Path("/proc/net", table).read_text().splitlines()[1:])
            except OSError:
                continue
            if entries:
                counts[table] = entries
        return counts
    for line in lines:
        kind, _, rest = line.partition(":")
        if kind not in IP_SOCKET_KINDS:
            continue
        words = rest.split()
        fields = dict(zip(words[::2], words[1::2], strict=False))
        # inuse and tw (TIME_WAIT) are this namespace's; orphan and alloc
        # count the whole host's (an orphan of ours is still in inuse).
        for key in ("inuse", "tw"):
            if fields.get(key, "0") != "0":
                counts[f"{kind} {key}"] = int(fields[key]) if fields[key].isdigit() else -1
    return counts


def recycle(harness_uid: int, learner_uid: int) -> list[str]:
    """Kill and delete everything of the job that just ended; the problems found (empty: clean)."""
    rounds = 0
    while rounds < KILL_ROUNDS:
        rounds += 1
        kill_others_of_this_uid()
        for uid in (harness_uid, learner_uid):
            _as(uid, _kill_wait_and_wipe)
        _reap()
        if not _live_processes():
            break
        time.sleep(0.01)
    if rounds > 1:
        # Something outlived a uid's wait: what it wrote after that uid's
        # files were deleted goes now, with every process dead.
        for uid in (harness_uid, learner_uid):
            _as(uid, _wipe_own_files)
    # The job's folders under /work are empty now; /work itself is root's.
    for entry in list(Path("/work").iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            try:
                entry.rmdir()
            except OSError:
                pass
    return _leftovers()
