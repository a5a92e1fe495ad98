"""The wheelhouse: Python packages downloaded on the host for the image's Python and glibc.

``docker build`` may not reach the package index; the image installs from
this folder with ``pip install --no-index``.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sandbox.image.shell import CACHE_DIR, build_failure, elapsed, log_step, run_command, run_streamed
from sandbox.image.tag import (
    REPO_ROOT,
    REQUIREMENTS,
    SandboxBuildError,
    _Inputs,
)

# Debian bookworm ships glibc 2.36 and Python 3.11 (as does the slim image):
# the host-downloaded wheels must match that, not whatever the host runs.
IMAGE_GLIBC_MINOR = 36
IMAGE_PYTHON_VERSION = "3.11"
IMAGE_PYTHON_ABI = "cp311"

WHEELHOUSE_ROOT = CACHE_DIR / "wheelhouse"
_WHEELHOUSE_STAMP = ".stamp.json"
_WHEELHOUSE_FORMAT = 1


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
    probe = run_command([sys.executable, "-m", "pip", "--version"])
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


def ensure_wheelhouse(inputs: _Inputs) -> Path:
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
        log_step(f"wheelhouse {directory.relative_to(REPO_ROOT)} is up to date")
        return directory

    start = time.monotonic()
    log_step(f"filling wheelhouse {directory.relative_to(REPO_ROOT)} ({constraint})")
    if variant == "cuda":
        log_step("the cuda wheelhouse is several GB (torch plus nvidia-* libraries)")
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
        rc, tail = run_streamed(
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
        raise build_failure(
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
    log_step(f"wheelhouse ready: {len(wheels)} wheels, {total_mb:.0f} MB, {torch_wheels[0]} ({elapsed(start)})")
    return directory


