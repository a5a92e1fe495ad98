"""Build the sandbox image that runs learner code and the grading harness.

Usage (from the repository root)::

    python -m sandbox.build [--variant cpu|cuda] [--force] [--print-tag]

The tag is a content hash of everything that goes into the image (Dockerfile,
requirements, variant, harness code), so callers can ask ``image_tag()`` which
image matches the checkout without touching Docker, and a stale image can
never be mistaken for a current one.

The build has to work on machines that reach no container registry and whose
``docker build`` cannot reach the Python package index. Hence:

* the base image is ``python:3.11-slim-bookworm`` when it can be pulled, and
  otherwise a Debian rootfs made with ``debootstrap`` and ``docker import``;
* Python packages are downloaded on the host (``pip download``) into a
  wheelhouse under ``.cache/wheelhouse/<variant>/`` and installed inside the
  build with ``pip install --no-index``;
* the build context is assembled in a temporary directory, so the repository
  (virtualenvs, caches, node_modules) is never sent to the daemon.

This module deliberately imports nothing from Django: it runs from CI scripts
and from a bare checkout before the platform is configured.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from sandbox.image.tag import (  # noqa: F401 - re-exported: callers import the tag from here too
    DOCKERFILE,
    HARNESS_DIR,
    IMAGE_DIR,
    IMAGE_REPOSITORY,
    REPO_ROOT,
    REQUIREMENTS,
    SANDBOX_DIR,
    VARIANTS,
    SandboxBuildError,
    _check_variant,
    _Inputs,
    _read_inputs,
    image_tag,
)

CACHE_DIR = REPO_ROOT / ".cache"
WHEELHOUSE_ROOT = CACHE_DIR / "wheelhouse"
LOCK_FILE = CACHE_DIR / "sandbox-build.lock"


REGISTRY_BASE = "python:3.11-slim-bookworm"
LOCAL_BASE = "llm-dojo-base:bookworm"
PULL_TIMEOUT_S = 30.0
DEBIAN_SUITE = "bookworm"
DEFAULT_DEBIAN_MIRROR = "http://deb.debian.org/debian"
# Debian bookworm ships glibc 2.36 and Python 3.11 (as does the slim image):
# the host-downloaded wheels must match that, not whatever the host runs.
IMAGE_GLIBC_MINOR = 36
IMAGE_PYTHON_VERSION = "3.11"
IMAGE_PYTHON_ABI = "cp311"
# The same PATH the Dockerfile spells out; an imported rootfs has none.
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# Escape hatches for sites with their own mirror or base image.
ENV_BASE_IMAGE = "LLM_DOJO_SANDBOX_BASE_IMAGE"
ENV_DEBIAN_MIRROR = "LLM_DOJO_DEBIAN_MIRROR"

_WHEELHOUSE_STAMP = ".stamp.json"
_WHEELHOUSE_FORMAT = 1


def _log(message: str) -> None:
    # stderr, so that stdout carries only the tag and `TAG=$(...)` works.
    print(f"[sandbox-build] {message}", file=sys.stderr, flush=True)


def _elapsed(start: float) -> str:
    return f"{time.monotonic() - start:.1f}s"


# --------------------------------------------------------------------------
# Inputs and tag
# --------------------------------------------------------------------------


# --------------------------------------------------------------------------
# Process helpers
# --------------------------------------------------------------------------


def _run(
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


def _run_streamed(
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
                _log(f"  {label} | {line}")
        return proc.wait(), list(tail)
    except BaseException:
        proc.kill()
        proc.wait()
        raise


def _failure(what: str, tail: Sequence[str], advice: str) -> SandboxBuildError:
    shown = "\n".join(f"    {line}" for line in tail[-25:])
    return SandboxBuildError(f"{what}\n  last output:\n{shown}\n  {advice}")


# --------------------------------------------------------------------------
# Docker
# --------------------------------------------------------------------------


def _image_exists(ref: str) -> bool:
    return _run(["docker", "image", "inspect", "--format", "{{.Id}}", ref]).returncode == 0


def _require_engine() -> None:
    result = _run(["docker", "info", "--format", "{{.ServerVersion}}"], timeout=30)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise SandboxBuildError(
            "the Docker engine does not answer `docker info`"
            + (f" ({detail[-1]})" if detail else "")
            + "; start it with scripts/ensure-docker.sh (as root) and retry"
        )


@contextlib.contextmanager
def _build_lock() -> Iterator[None]:
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
            _log(f"another build holds {LOCK_FILE}; waiting for it")
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


# --------------------------------------------------------------------------
# Wheelhouse
# --------------------------------------------------------------------------


def _torch_version(requirements: str) -> str:
    match = re.search(r"^\s*torch\s*==\s*([0-9][0-9A-Za-z.]*)\s*(?:#.*)?$", requirements, re.MULTILINE)
    if match is None:
        raise SandboxBuildError(f"{REQUIREMENTS} must pin torch as `torch==X.Y.Z`")
    return match.group(1)


def _torch_constraint(variant: str, version: str) -> str:
    """Pick the torch build for the variant.

    ``torch==2.13.0`` matches both PyPI's CUDA build ``2.13.0`` and the local
    ``2.13.0+cpu`` build, and pip prefers the latter when both are offered.
    For cpu the local label is required (so a machine without a CPU wheel
    source fails fast instead of fetching gigabytes of CUDA libraries); for
    cuda ``===`` (exact string match) excludes ``+cpu``.
    """
    return f"torch=={version}+cpu" if variant == "cpu" else f"torch==={version}"


def _pip_target_args() -> list[str]:
    """Pin wheel selection to the image's platform, not the host's Python."""
    machine = platform.machine().lower()
    arch = {
        "x86_64": "x86_64",
        "amd64": "x86_64",
        "aarch64": "aarch64",
        "arm64": "aarch64",
    }.get(machine)
    if arch is None:
        raise SandboxBuildError(f"unsupported host architecture {machine!r} (need x86_64 or aarch64)")
    # pip 23 does not expand manylinux_2_36 to older glibc tags: list them.
    platforms = [f"manylinux_2_{minor}_{arch}" for minor in range(IMAGE_GLIBC_MINOR, 16, -1)]
    platforms.append(f"manylinux2014_{arch}")
    if arch == "x86_64":
        platforms += ["manylinux2010_x86_64", "manylinux1_x86_64"]
    args = ["--only-binary=:all:", "--implementation", "cp"]
    args += ["--python-version", IMAGE_PYTHON_VERSION, "--abi", IMAGE_PYTHON_ABI]
    for tag in platforms:
        args += ["--platform", tag]
    return args


def _pip_command() -> list[str]:
    probe = _run([sys.executable, "-m", "pip", "--version"])
    if probe.returncode == 0:
        return [sys.executable, "-m", "pip"]
    for name in ("pip3", "pip"):
        found = shutil.which(name)
        if found:
            return [found]
    raise SandboxBuildError(f"no pip available ({sys.executable} -m pip failed and none on PATH); install pip for the host Python")


def _wheelhouse_valid(directory: Path, key: str) -> bool:
    try:
        stamp = json.loads((directory / _WHEELHOUSE_STAMP).read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(stamp, dict) or stamp.get("key") != key:
        return False
    files = stamp.get("files")
    if not isinstance(files, dict) or not files:
        return False
    for name, size in files.items():
        path = directory / str(name)
        if not path.is_file() or path.stat().st_size != size:
            return False
    return True


def _ensure_wheelhouse(inputs: _Inputs) -> Path:
    """Fill ``.cache/wheelhouse/<variant>`` unless it already matches.

    The stamp records a hash of everything that decides which wheels are
    needed, plus each wheel's size, so an interrupted or outdated download is
    redone and a complete one is reused without asking the index.
    """
    variant = inputs.variant
    requirements_text = inputs.requirements.decode("utf-8", errors="replace")
    constraint = _torch_constraint(variant, _torch_version(requirements_text))
    target_args = _pip_target_args()
    spec: dict[str, Any] = {
        "format": _WHEELHOUSE_FORMAT,
        "variant": variant,
        "requirements_sha256": hashlib.sha256(inputs.requirements).hexdigest(),
        "constraint": constraint,
        "target": target_args,
    }
    key = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
    directory = WHEELHOUSE_ROOT / variant
    if _wheelhouse_valid(directory, key):
        _log(f"wheelhouse {directory.relative_to(REPO_ROOT)} is up to date")
        return directory

    start = time.monotonic()
    _log(f"filling wheelhouse {directory.relative_to(REPO_ROOT)} ({constraint})")
    if variant == "cuda":
        _log("the cuda wheelhouse is several GB (torch plus nvidia-* libraries)")
    WHEELHOUSE_ROOT.mkdir(parents=True, exist_ok=True)
    partial = WHEELHOUSE_ROOT / f"{variant}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    with tempfile.TemporaryDirectory(prefix="constraints-", dir=WHEELHOUSE_ROOT) as tmp:
        constraints_file = Path(tmp) / "constraints.txt"
        constraints_file.write_text(constraint + "\n")
        # The requirements file is written from the bytes that were hashed.
        requirements_file = Path(tmp) / "requirements.txt"
        requirements_file.write_bytes(inputs.requirements)
        cmd = [
            *_pip_command(),
            "download",
            "--dest",
            str(partial),
            "--progress-bar",
            "off",
            "--requirement",
            str(requirements_file),
            "--constraint",
            str(constraints_file),
            *target_args,
        ]
        rc, tail = _run_streamed(
            cmd,
            label="pip",
            show=lambda line: line.startswith(("Saved", "ERROR", "Downloading", "Successfully")),
        )
    if rc != 0:
        shutil.rmtree(partial, ignore_errors=True)
        advice = "check that the package index is reachable (pip config list) and the pins exist."
        if variant == "cpu":
            advice += (
                f" A CPU torch build ({constraint}) must be offered: e.g. put its wheel in a directory named"
                " by PIP_FIND_LINKS, or set PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu."
            )
        raise _failure(
            f"pip download for the {variant} wheelhouse failed (exit {rc})",
            tail,
            advice,
        )

    wheels = sorted(p for p in partial.iterdir() if p.is_file())
    torch_wheels = [p.name for p in wheels if p.name.startswith("torch-")]
    wanted_cpu = variant == "cpu"
    if len(torch_wheels) != 1 or ("+cpu" in torch_wheels[0]) != wanted_cpu:
        shutil.rmtree(partial, ignore_errors=True)
        raise SandboxBuildError(
            f"the {variant} wheelhouse got torch wheels {torch_wheels}, expected exactly one "
            f"{'+cpu' if wanted_cpu else 'non-+cpu (CUDA)'} build; check pip's find-links/index configuration"
        )
    total_mb = sum(p.stat().st_size for p in wheels) / 1e6
    stamp = {
        "key": key,
        "spec": spec,
        "files": {p.name: p.stat().st_size for p in wheels},
    }
    (partial / _WHEELHOUSE_STAMP).write_text(json.dumps(stamp, indent=2, sort_keys=True) + "\n")
    # Swap in whole, so a reader never sees a half-filled wheelhouse.
    old = WHEELHOUSE_ROOT / f"{variant}.old"
    shutil.rmtree(old, ignore_errors=True)
    if directory.exists():
        directory.rename(old)
    partial.rename(directory)
    shutil.rmtree(old, ignore_errors=True)
    _log(f"wheelhouse ready: {len(wheels)} wheels, {total_mb:.0f} MB, {torch_wheels[0]} ({_elapsed(start)})")
    return directory


# --------------------------------------------------------------------------
# Base image
# --------------------------------------------------------------------------


def _select_base_image() -> str:
    """A registry base where reachable, else the debootstrapped one.

    The registry image is preferred because it is what most sites have and
    is maintained upstream; air-gapped machines (and this project's CI) reach
    no registry and get an equivalent base built from Debian packages.
    """
    override = os.environ.get(ENV_BASE_IMAGE, "").strip()
    if override:
        _log(f"base image from ${ENV_BASE_IMAGE}: {override}")
        return override
    if _image_exists(REGISTRY_BASE):
        _log(f"base image {REGISTRY_BASE} (present locally)")
        return REGISTRY_BASE
    start = time.monotonic()
    _log(f"trying to pull {REGISTRY_BASE} (timeout {PULL_TIMEOUT_S:.0f}s)")
    try:
        pulled = _run(["docker", "pull", "--quiet", REGISTRY_BASE], timeout=PULL_TIMEOUT_S)
        if pulled.returncode == 0:
            _log(f"base image {REGISTRY_BASE} (pulled, {_elapsed(start)})")
            return REGISTRY_BASE
        reason = (pulled.stderr or pulled.stdout).strip().splitlines()
        _log(f"pull failed ({reason[-1] if reason else 'no output'}); using {LOCAL_BASE}")
    except subprocess.TimeoutExpired:
        _log(f"pull timed out after {PULL_TIMEOUT_S:.0f}s; using {LOCAL_BASE}")
    if _image_exists(LOCAL_BASE):
        _log(f"base image {LOCAL_BASE} (present locally)")
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
        if _run(["umount", point]).returncode != 0:
            _run(["umount", "-l", point])
    left = _mounts_under(path)
    if left:
        _log(f"WARNING: not deleting {path}: still mounted: {', '.join(left)}")
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
        _log("debootstrap not installed: installing it with apt-get")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for cmd in (
            ["apt-get", "update", "-q"],
            ["apt-get", "install", "-y", "-q", "debootstrap"],
        ):
            rc, tail = _run_streamed(
                cmd,
                label="apt",
                show=lambda line: line.startswith(("E:", "W:")),
                env=env,
            )
            if rc != 0:
                raise _failure(
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
        _log(f"creating {LOCAL_BASE} with debootstrap ({DEBIAN_SUITE} from {mirror}; about a minute)")
        cmd = [
            debootstrap,
            "--variant=minbase",
            "--include=python3,python3-venv",
            DEBIAN_SUITE,
            str(rootfs),
            mirror,
        ]
        rc, tail = _run_streamed(
            cmd,
            label="debootstrap",
            show=lambda line: line.startswith(("E:", "W:")) or "installed successfully" in line,
        )
        if rc != 0:
            raise _failure(
                f"debootstrap failed (exit {rc})",
                tail,
                f"check that {mirror} is reachable (or set ${ENV_DEBIAN_MIRROR}); "
                f"debootstrap's own log is in {rootfs}/debootstrap/debootstrap.log while it runs",
            )
        _trim_rootfs(rootfs)
        _log(f"debootstrap done ({_elapsed(start)}); importing into docker")
        _import_rootfs(rootfs)
        _log(f"{LOCAL_BASE} created ({_elapsed(start)})")
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
        rc, tail = _run_streamed(import_cmd, label="import", stdin=tar.stdout, show=lambda _line: False)
    finally:
        tar.stdout.close()
        tar_err = tar.stderr.read().decode(errors="replace")
        tar_rc = tar.wait()
    if tar_rc != 0:
        raise SandboxBuildError(f"tar of the debootstrapped rootfs failed (exit {tar_rc}): {tar_err.strip()}")
    if rc != 0:
        raise _failure(
            f"docker import of {LOCAL_BASE} failed (exit {rc})",
            tail,
            "check `docker info` and disk space",
        )


# --------------------------------------------------------------------------
# Build
# --------------------------------------------------------------------------


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _assemble_context(ctx: Path, inputs: _Inputs, wheelhouse: Path) -> None:
    """Only what the Dockerfile needs, so the daemon gets ~200 MB, not the repo."""
    (ctx / "Dockerfile").write_bytes(inputs.dockerfile)
    (ctx / "requirements.txt").write_bytes(inputs.requirements)
    wheels = ctx / "wheels"
    wheels.mkdir()
    for path in sorted(wheelhouse.iterdir()):
        if path.is_file() and path.name.endswith(".whl"):
            _link_or_copy(path, wheels / path.name)
    harness = ctx / "harness"
    harness.mkdir(mode=0o755)
    for rel, data in inputs.harness:
        target = harness / rel
        for parent in reversed(target.relative_to(harness).parents):
            directory = harness / parent
            if not directory.exists():
                directory.mkdir(mode=0o755)
                directory.chmod(0o755)
        target.write_bytes(data)
        target.chmod(0o644)
    harness.chmod(0o755)


def _docker_build(tag: str, base: str, ctx: Path, inputs: _Inputs, no_cache: bool) -> None:
    cmd = [
        "docker",
        "build",
        "--build-arg",
        f"BASE_IMAGE={base}",
        "--label",
        f"llm-dojo.sandbox.variant={inputs.variant}",
        "--label",
        f"llm-dojo.sandbox.inputs-sha256={inputs.digest()}",
        "--label",
        f"llm-dojo.sandbox.base={base}",
        "--tag",
        tag,
    ]
    if no_cache:
        cmd.append("--no-cache")
    cmd.append(str(ctx))
    start = time.monotonic()
    _log(f"docker build {tag} on {base}{' (no cache)' if no_cache else ''}")
    rc, tail = _run_streamed(cmd, label="docker")
    if rc != 0:
        raise _failure(
            f"docker build of {tag} failed (exit {rc})",
            tail,
            "fix the step shown above; rerun with --force to rebuild without the layer cache",
        )
    _log(f"docker build done ({_elapsed(start)})")


def _smoke_test(tag: str, variant: str) -> None:
    """Refuse to leave a tag that cannot import its own packages.

    Callers treat an existing tag as a working image; a broken one would
    otherwise fail every grading run until someone noticed.
    """
    start = time.monotonic()
    result = _run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            "--entrypoint",
            "/opt/venv/bin/python",
            tag,
            "-I",
            "-c",
            "import numpy, pytest, torch; print(torch.__version__)",
        ],
        timeout=300,
    )
    version = result.stdout.strip()
    ok = result.returncode == 0 and (version.endswith("+cpu") if variant == "cpu" else bool(version))
    if not ok:
        _run(["docker", "image", "rm", "--force", tag])
        raise SandboxBuildError(
            f"smoke test of {tag} failed (exit {result.returncode}, torch {version or '?'}): "
            f"{result.stderr.strip()[-2000:]}; the tag was removed. Rerun with --force."
        )
    _log(f"smoke test ok: torch {version} ({_elapsed(start)})")


def ensure_image(variant: str = "cpu", force: bool = False, *, harness_dir: Path | None = None) -> str:
    """Return the image tag for this checkout, building the image if needed.

    Builds only when ``docker image inspect TAG`` fails, or when ``force``
    (then without the layer cache; the wheelhouse and base image are kept).
    ``harness_dir`` overrides ``sandbox/harness`` (for tests).
    """
    inputs = _read_inputs(variant, harness_dir)
    tag = inputs.tag()
    if not force and _image_exists(tag):
        _log(f"{tag} is up to date")
        return tag
    _require_engine()
    if "entry.py" not in {rel for rel, _data in inputs.harness}:
        where = harness_dir if harness_dir is not None else HARNESS_DIR
        raise SandboxBuildError(f"{where}/entry.py is missing: the image's ENTRYPOINT runs it")
    with _build_lock():
        if not force and _image_exists(tag):
            _log(f"{tag} was built by another process")
            return tag
        start = time.monotonic()
        _log(f"building {tag}")
        wheelhouse = _ensure_wheelhouse(inputs)
        base = _select_base_image()
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        # Inside .cache so the wheels can be hard links (same filesystem).
        ctx = Path(tempfile.mkdtemp(prefix="build-context-", dir=CACHE_DIR))
        try:
            _assemble_context(ctx, inputs, wheelhouse)
            _docker_build(tag, base, ctx, inputs, no_cache=force)
        finally:
            shutil.rmtree(ctx, ignore_errors=True)
        _smoke_test(tag, variant)
        size = _run(["docker", "image", "inspect", "--format", "{{.Size}}", tag]).stdout.strip()
        size_text = f"{int(size) / 1e6:.0f} MB" if size.isdigit() else "size unknown"
        _log(f"built {tag} ({size_text}) in {_elapsed(start)}")
    return tag


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sandbox.build",
        description="Build the sandbox image (if missing) and print its tag on stdout.",
    )
    parser.add_argument(
        "--variant",
        choices=VARIANTS,
        default="cpu",
        help="torch build to install (default: cpu)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="rebuild even if the tag exists, without docker's layer cache",
    )
    parser.add_argument("--print-tag", action="store_true", help="only print the tag; no Docker calls")
    args = parser.parse_args(argv)
    try:
        if args.print_tag:
            print(image_tag(args.variant))
            return 0
        start = time.monotonic()
        tag = ensure_image(args.variant, force=args.force)
        _log(f"done in {_elapsed(start)}")
        print(tag)
        return 0
    except SandboxBuildError as exc:
        _log(f"ERROR: {exc}")
        return 1
    except KeyboardInterrupt:
        _log("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
