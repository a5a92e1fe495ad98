"""Build the sandbox image: assemble the context, ``docker build``, smoke-test; and the CLI.

See ``sandbox/build.py`` (``python -m sandbox.build``) for why the build is shaped this way.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from sandbox.image.base import select_base_image
from sandbox.image.shell import (
    CACHE_DIR,
    build_failure,
    build_lock,
    elapsed,
    image_exists,
    log_step,
    require_engine,
    run_command,
    run_streamed,
)
from sandbox.image.tag import (
    HARNESS_DIR,
    VARIANTS,
    SandboxBuildError,
    _Inputs,
    _read_inputs,
    image_tag,
)
from sandbox.image.wheelhouse import ensure_wheelhouse


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
    log_step(f"docker build {tag} on {base}{' (no cache)' if no_cache else ''}")
    rc, tail = run_streamed(cmd, label="docker")
    if rc != 0:
        raise build_failure(
            f"docker build of {tag} failed (exit {rc})",
            tail,
            "fix the step shown above; rerun with --force to rebuild without the layer cache",
        )
    log_step(f"docker build done ({elapsed(start)})")


def smoke_test_passes(variant: str, torch_version: str, cuda_version: str) -> bool:
    """The image's torch is the variant's build: ``+cpu`` without CUDA, or a CUDA build.

    No GPU is needed: ``torch.version.cuda`` says what torch was built for,
    whether or not this host has a device (the build host usually has none).
    """
    if variant == "cpu":
        return torch_version.endswith("+cpu") and not cuda_version
    return bool(torch_version) and not torch_version.endswith("+cpu") and bool(cuda_version)


def _smoke_test(tag: str, variant: str) -> None:
    """Refuse to leave a tag that cannot import its own packages.

    Callers treat an existing tag as a working image; a broken one would
    otherwise fail every grading run until someone noticed.
    """
    start = time.monotonic()
    result = run_command(
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
            "import numpy, pytest, torch; print(torch.__version__, torch.version.cuda or '')",
        ],
        timeout=300,
    )
    version, _, cuda = result.stdout.strip().partition(" ")
    ok = result.returncode == 0 and smoke_test_passes(variant, version, cuda)
    if not ok:
        run_command(["docker", "image", "rm", "--force", tag])
        raise SandboxBuildError(
            f"smoke test of {tag} failed (exit {result.returncode}, torch {version or '?'}): "
            f"{result.stderr.strip()[-2000:]}; the tag was removed. Rerun with --force."
        )
    log_step(f"smoke test ok: torch {version} ({elapsed(start)})")


def ensure_image(variant: str = "cpu", force: bool = False, *, harness_dir: Path | None = None) -> str:
    """Return the image tag for this checkout, building the image if needed.

    Builds only when ``docker image inspect TAG`` fails, or when ``force``
    (then without the layer cache; the wheelhouse and base image are kept).
    ``harness_dir`` overrides ``sandbox/harness`` (for tests).
    """
    inputs = _read_inputs(variant, harness_dir)
    tag = inputs.tag()
    if not force and image_exists(tag):
        log_step(f"{tag} is up to date")
        return tag
    require_engine()
    if "entry.py" not in {rel for rel, _data in inputs.harness}:
        where = harness_dir if harness_dir is not None else HARNESS_DIR
        raise SandboxBuildError(f"{where}/entry.py is missing: the image's ENTRYPOINT runs it")
    with build_lock():
        if not force and image_exists(tag):
            log_step(f"{tag} was built by another process")
            return tag
        start = time.monotonic()
        log_step(f"building {tag}")
        wheelhouse = ensure_wheelhouse(inputs)
        base = select_base_image()
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        # Inside .cache so the wheels can be hard links (same filesystem).
        ctx = Path(tempfile.mkdtemp(prefix="build-context-", dir=CACHE_DIR))
        try:
            _assemble_context(ctx, inputs, wheelhouse)
            _docker_build(tag, base, ctx, inputs, no_cache=force)
        finally:
            shutil.rmtree(ctx, ignore_errors=True)
        _smoke_test(tag, variant)
        size = run_command(["docker", "image", "inspect", "--format", "{{.Size}}", tag]).stdout.strip()
        size_text = f"{int(size) / 1e6:.0f} MB" if size.isdigit() else "size unknown"
        log_step(f"built {tag} ({size_text}) in {elapsed(start)}")
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
        log_step(f"done in {elapsed(start)}")
        print(tag)
        return 0
    except SandboxBuildError as exc:
        log_step(f"ERROR: {exc}")
        return 1
    except KeyboardInterrupt:
        log_step("interrupted")
        return 130

