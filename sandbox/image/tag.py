"""The sandbox image's tag: a content hash of everything that goes into it.

The only part of the image code on the workers' runtime path: pure file
reading, no Docker, no subprocess. Building is ``sandbox.image.build``.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
SANDBOX_DIR = REPO_ROOT / "sandbox"
IMAGE_DIR = SANDBOX_DIR / "image"
DOCKERFILE = IMAGE_DIR / "Dockerfile"
REQUIREMENTS = IMAGE_DIR / "requirements.txt"
HARNESS_DIR = SANDBOX_DIR / "harness"

IMAGE_REPOSITORY = "llm-dojo-sandbox"
VARIANTS: tuple[str, ...] = ("cpu", "cuda")
TAG_HEX_CHARS = 12
# Bumped whenever the hashing scheme changes, so old tags cannot collide.
_TAG_SCHEME = b"llm-dojo-sandbox-tag-v1"


class SandboxBuildError(RuntimeError):
    """A build step failed; the message says what failed and what to do."""


def _check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"unknown sandbox variant {variant!r}; expected one of {', '.join(VARIANTS)}")



@dataclass(frozen=True)
class _Inputs:
    """Everything the image is made from, read once.

    Reading the bytes once and using them both for the hash and for the build
    context means a file edited mid-build cannot end up in an image whose tag
    describes its old content.
    """

    variant: str
    dockerfile: bytes
    requirements: bytes
    harness: tuple[tuple[str, bytes], ...]

    def digest(self) -> str:
        h = hashlib.sha256()

        def add(label: str, data: bytes) -> None:
            # Length-prefixed, so no two different input sets hash alike.
            h.update(label.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)

        add("scheme", _TAG_SCHEME)
        add("variant", self.variant.encode())
        add("Dockerfile", self.dockerfile)
        add("requirements.txt", self.requirements)
        for rel, data in self.harness:
            add(f"harness/{rel}", data)
        return h.hexdigest()

    def tag(self) -> str:
        return f"{IMAGE_REPOSITORY}:{self.variant}-{self.digest()[:TAG_HEX_CHARS]}"


def _harness_files(harness_dir: Path) -> list[tuple[str, Path]]:
    """Harness files by sorted relative POSIX path, without bytecode.

    Bytecode is skipped because it differs between machines and Python runs
    and is regenerated inside the image anyway.
    """
    if not harness_dir.is_dir():
        return []
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(harness_dir):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            if name.endswith(".pyc"):
                continue
            path = Path(dirpath) / name
            if path.is_file():
                found.append((path.relative_to(harness_dir).as_posix(), path))
    found.sort(key=lambda item: item[0])
    return found


def _read_inputs(variant: str, harness_dir: Path | None) -> _Inputs:
    _check_variant(variant)
    try:
        dockerfile = DOCKERFILE.read_bytes()
        requirements = REQUIREMENTS.read_bytes()
    except FileNotFoundError as exc:
        raise SandboxBuildError(f"image input missing: {exc.filename}; is this a complete checkout?") from exc
    files = _harness_files(harness_dir if harness_dir is not None else HARNESS_DIR)
    harness = tuple((rel, path.read_bytes()) for rel, path in files)
    return _Inputs(
        variant=variant,
        dockerfile=dockerfile,
        requirements=requirements,
        harness=harness,
    )


def image_tag(variant: str = "cpu", *, harness_dir: Path | None = None) -> str:
    """The tag the image for ``variant`` has when built from this checkout.

    Pure file reading, no Docker: cheap enough to call per grading job.
    ``harness_dir`` overrides ``sandbox/harness`` (for tests).
    """
    return _read_inputs(variant, harness_dir).tag()
