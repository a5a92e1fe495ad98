#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> None:
    # NOTE: `platform/` holds the Django configuration as the package `config`.
    # We put the folder itself on sys.path, never its parent's `platform`
    # package: a top-level `platform` would shadow the standard library.
    sys.path.insert(0, str(Path(__file__).resolve().parent / "platform"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
