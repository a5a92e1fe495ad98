"""Shared by the image build steps: logging, subprocesses, the Docker engine, the build lock."""

from __future__ import annotations

import contextlib
import fcntl
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import IO

from sandbox.image.tag import (
    REPO_ROOT,
    SandboxBuildError,
)

CACHE_DIR = REPO_ROOT / ".cache"
LOCK_FILE = CACHE_DIR / "sandbox-build.lock"


def log_step(message: str) -> None:
    # stderr, so that stdout carries only the tag and `TAG=$(...)` works.
    print(f"[sandbox-build] {message}", file=sys.stderr, flush=True)


def elapsed(start: float) -> str:
    return f"{time.monotonic() - start:.1f}s"



def run_command(
    cmd: Sequence[str],
    *,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a short command, capturing its output, never raising on exit status."""
    try:
        return subprocess.run(
            list(cmd),
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env=env,
            check=False,
        )
    except FileNotFoundError as exc:
        raise SandboxBuildError(f"{cmd[0]!r} not found on PATH; install it (see scripts/ensure-docker.sh)") from exc


def run_streamed(
    cmd: Sequence[str],
    *,
    label: str,
    show: Callable[[str], bool] = lambda _line: True,
    env: dict[str, str] | None = None,
    stdin: IO[bytes] | None = None,
) -> tuple[int, list[str]]:
    """Run a long command, echoing selected output lines as progress.

    Returns the exit status and the last lines of output, which go into the
    error message on failure (the lines not echoed are often the useful ones).
    """
    tail: deque[str] = deque(maxlen=40)
    try:
        proc = subprocess.Popen(
            list(cmd),
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            env=env,
        )
    except FileNotFoundError as exc:
        raise SandboxBuildError(f"{cmd[0]!r} not found on PATH") from exc
    assert proc.stdout is not None
    try:
        for raw in proc.stdout:
            line = raw.rstrip("\n")
            tail.append(line)
            if show(line):
                log_step(f"  {label} | {line}")
        return proc.wait(), list(tail)
    except BaseException:
        proc.kill()
        proc.wait()
        raise


def build_failure(what: str, tail: Sequence[str], advice: str) -> SandboxBuildError:
    shown = "\n".join(f"    {line}" for line in tail[-25:])
    return SandboxBuildError(f"{what}\n  last output:\n{shown}\n  {advice}")


# --------------------------------------------------------------------------
# Docker
# --------------------------------------------------------------------------


def image_exists(ref: str) -> bool:
    return run_command(["docker", "image", "inspect", "--format", "{{.Id}}", ref]).returncode == 0


def require_engine() -> None:
    result = run_command(["docker", "info", "--format", "{{.ServerVersion}}"], timeout=30)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise SandboxBuildError(
            "the Docker engine does not answer `docker info`"
            + (f" ({detail[-1]})" if detail else "")
            + "; start it with scripts/ensure-docker.sh (as root) and retry"
        )


@contextlib.contextmanager
def build_lock() -> Iterator[None]:
    """Serialise builds between processes (workers, tests, CI) on one host.

    Two concurrent builds would download the same wheelhouse into the same
    directory and debootstrap twice; the second one waits and then usually
    finds the image already built.
    """
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with open(LOCK_FILE, "a+b") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log_step(f"another build holds {LOCK_FILE}; waiting for it")
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


