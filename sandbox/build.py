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

The code lives in ``sandbox/image/``: ``tag`` (the only part on the
workers' runtime path), ``wheelhouse``, ``base`` and ``build``; this module
keeps ``python -m sandbox.build`` and its imports working.

The package deliberately imports nothing from Django: it runs from CI scripts
and from a bare checkout before the platform is configured.
"""

from __future__ import annotations

import sys

from sandbox.image.build import ensure_image, main
from sandbox.image.tag import VARIANTS, SandboxBuildError, image_tag

__all__ = ["VARIANTS", "SandboxBuildError", "ensure_image", "image_tag", "main"]

if __name__ == "__main__":
    sys.exit(main())
