"""The base image: python:3.11-slim-bookworm when it can be pulled, else a debootstrapped Debian."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from sandbox.image.shell import build_failure, elapsed, image_exists, log_step, run_command, run_streamed
from sandbox.image.tag import (
    SandboxBuildError,
)

REGISTRY_BASE = "python:3.11-slim-bookworm"
LOCAL_BASE = "llm-dojo-base:bookworm"
PULL_TIMEOUT_S = 30.0
DEBIAN_SUITE = "bookworm"
DEFAULT_DEBIAN_MIRROR = "http://deb.debian.org/debian"
# The same PATH the Dockerfile spells out; an imported rootfs has none.
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# Escape hatches for sites with their own mirror or base image.
ENV_BASE_IMAGE = "LLM_DOJO_SANDBOX_BASE_IMAGE"
ENV_DEBIAN_MIRROR = "LLM_DOJO_DEBIAN_MIRROR"


def select_base_image() -> str:
    """A registry base where reachable, else the debootstrapped one.

    The registry image is preferred because it is what most sites have and
    is maintained upstream; air-gapped machines (and this project's CI) reach
    no registry and get an equivalent base built from Debian packages.
    """
    override = os.environ.get(ENV_BASE_IMAGE, "").strip()
    if override:
        log_step(f"base image from ${ENV_BASE_IMAGE}: {override}")
        return override
    if image_exists(REGISTRY_BASE):
        log_step(f"base image {REGISTRY_BASE} (present locally)")
        return REGISTRY_BASE
    start = time.monotonic()
    log_step(f"trying to pull {REGISTRY_BASE} (timeout {PULL_TIMEOUT_S:.0f}s)")
    try:
        pulled = run_command(["docker", "pull", "--quiet", REGISTRY_BASE], timeout=PULL_TIMEOUT_S)
        if pulled.returncode == 0:
            log_step(f"base image {REGISTRY_BASE} (pulled, {elapsed(start)})")
            return REGISTRY_BASE
        reason = (pulled.stderr or pulled.stdout).strip().splitlines()
        log_step(f"pull failed ({reason[-1] if reason else 'no output'}); using {LOCAL_BASE}")
    except subprocess.TimeoutExpired:
        log_step(f"pull timed out after {PULL_TIMEOUT_S:.0f}s; using {LOCAL_BASE}")
    if image_exists(LOCAL_BASE):
        log_step(f"base image {LOCAL_BASE} (present locally)")
        return LOCAL_BASE
    _bootstrap_base()
    return LOCAL_BASE


def _mounts_under(path: Path) -> list[str]:
    """Mount points at or below ``path`` (debootstrap mounts proc/sys inside)."""
    root = os.path.realpath(path)
    found: list[str] = []
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                fields = line.split()
                if len(fields) < 2:
                    continue
                # /proc/mounts escapes spaces etc. as octal (\040).
                point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[1])
                if point == root or point.startswith(root + "/"):
                    found.append(point)
    except OSError:
        pass
    return found


def _remove_rootfs(path: Path) -> None:
    """Delete a debootstrap target without ever descending into a live mount.

    A failed debootstrap can leave /proc or /sys mounted inside the target;
    a plain rmtree would then try to delete the host's /proc and /sys.
    """
    for point in sorted(_mounts_under(path), key=len, reverse=True):
        if run_command(["umount", point]).returncode != 0:
            run_command(["umount", "-l", point])
    left = _mounts_under(path)
    if left:
        log_step(f"WARNING: not deleting {path}: still mounted: {', '.join(left)}")
        return
    shutil.rmtree(path, ignore_errors=True)


def _find_debootstrap() -> str | None:
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    return shutil.which("debootstrap", path=search)


def _bootstrap_base() -> None:
    """Create LOCAL_BASE from Debian packages (needs root and a Debian mirror)."""
    is_root = os.geteuid() == 0
    debootstrap = _find_debootstrap()
    if debootstrap is None:
        if not is_root:
            raise SandboxBuildError(
                f"no registry base image and {LOCAL_BASE} is missing; creating it needs debootstrap, which is not "
                f"installed, and root. Run `python -m sandbox.build` once as root (or `apt-get install debootstrap`)."
            )
        log_step("debootstrap not installed: installing it with apt-get")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for cmd in (
            ["apt-get", "update", "-q"],
            ["apt-get", "install", "-y", "-q", "debootstrap"],
        ):
            rc, tail = run_streamed(
                cmd,
                label="apt",
                show=lambda line: line.startswith(("E:", "W:")),
                env=env,
            )
            if rc != 0:
                raise build_failure(
                    f"`{' '.join(cmd)}` failed (exit {rc})",
                    tail,
                    "check the Debian mirror in /etc/apt.",
                )
        debootstrap = _find_debootstrap()
        if debootstrap is None:
            raise SandboxBuildError("debootstrap was installed but is not on PATH (/usr/sbin)")
    if not is_root:
        raise SandboxBuildError(
            f"no registry base image and {LOCAL_BASE} is missing; debootstrap must run as root to create it. "
            "Run `python -m sandbox.build` once as root, or set "
            f"${ENV_BASE_IMAGE} to a Debian bookworm image with python3.11 and python3-venv."
        )

    mirror = os.environ.get(ENV_DEBIAN_MIRROR, "").strip() or DEFAULT_DEBIAN_MIRROR
    start = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="llm-dojo-debootstrap-"))
    rootfs = workdir / "rootfs"
    try:
        log_step(f"creating {LOCAL_BASE} with debootstrap ({DEBIAN_SUITE} from {mirror}; about a minute)")
        cmd = [
            debootstrap,
            "--variant=minbase",
            "--include=python3,python3-venv",
            DEBIAN_SUITE,
            str(rootfs),
            mirror,
        ]
        rc, tail = run_streamed(
            cmd,
            label="debootstrap",
            show=lambda line: line.startswith(("E:", "W:")) or "installed successfully" in line,
        )
        if rc != 0:
            raise build_failure(
                f"debootstrap failed (exit {rc})",
                tail,
                f"check that {mirror} is reachable (or set ${ENV_DEBIAN_MIRROR}); "
                f"debootstrap's own log is in {rootfs}/debootstrap/debootstrap.log while it runs",
            )
        _trim_rootfs(rootfs)
        log_step(f"debootstrap done ({elapsed(start)}); importing into docker")
        _import_rootfs(rootfs)
        log_step(f"{LOCAL_BASE} created ({elapsed(start)})")
    finally:
        _remove_rootfs(workdir)


def _trim_rootfs(rootfs: Path) -> None:
    """Drop what only apt and humans use, and what came from the host."""
    for rel in ("var/cache/apt/archives", "var/lib/apt/lists"):
        target = rootfs / rel
        if target.is_dir():
            for child in target.iterdir():
                if child.is_file() and not child.is_symlink() and child.name != "lock":
                    child.unlink()
    for rel in ("usr/share/man", "usr/share/info"):
        target = rootfs / rel
        if target.is_dir() and not target.is_symlink() and not _mounts_under(target):
            shutil.rmtree(target, ignore_errors=True)
    # Message translations (~30 MB); glibc's locale.alias file stays.
    locale = rootfs / "usr" / "share" / "locale"
    if locale.is_dir() and not locale.is_symlink():
        for child in locale.iterdir():
            if child.is_dir() and not child.is_symlink() and not _mounts_under(child):
                shutil.rmtree(child, ignore_errors=True)
    # Docker provides these at run time; the copies are the build host's.
    (rootfs / "etc" / "hostname").unlink(missing_ok=True)
    resolv = rootfs / "etc" / "resolv.conf"
    if resolv.is_file() and not resolv.is_symlink():
        resolv.write_text("")


def _import_rootfs(rootfs: Path) -> None:
    tar_cmd = ["tar", "--numeric-owner", "-C", str(rootfs), "-c", "."]
    import_cmd = [
        "docker",
        "import",
        "--change",
        f"ENV PATH={DEFAULT_PATH}",
        "--change",
        "ENV LANG=C.UTF-8",
        "--change",
        'CMD ["/bin/bash"]',
        "--message",
        f"debootstrap --variant=minbase --include=python3,python3-venv {DEBIAN_SUITE}",
        "-",
        LOCAL_BASE,
    ]
    try:
        tar = subprocess.Popen(tar_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError as exc:
        raise SandboxBuildError("tar not found on PATH") from exc
    assert tar.stdout is not None and tar.stderr is not None
    try:
        rc, tail = run_streamed(import_cmd, label="import", stdin=tar.stdout, show=lambda _line: False)
    finally:
        tar.stdout.close()
        tar_err = tar.stderr.read().decode(errors="replace")
        tar_rc = tar.wait()
    if tar_rc != 0:
        raise SandboxBuildError(f"tar of the debootstrapped rootfs failed (exit {tar_rc}): {tar_err.strip()}")
    if rc != 0:
        raise build_failure(
            f"docker import of {LOCAL_BASE} failed (exit {rc})",
            tail,
            "check `docker info` and disk space",
        )


