"""Runs the real ``dojo`` command (``python -m dojo_cli``, as installed by ``pip install ./cli``) and keeps a transcript."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

CLI_ROOT = Path(__file__).resolve().parents[2] / "cli"


@dataclass
class Dojo:
    config_dir: Path
    cwd: Path
    transcript: list[str] = field(default_factory=list)

    def __call__(self, *args: str, input: str | None = None, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "DOJO_CONFIG_DIR": str(self.config_dir),
            "PYTHONPATH": str(CLI_ROOT),
            "COLUMNS": "120",
            "NO_COLOR": "1",
            "TERM": "dumb",
        }
        done = subprocess.run(
            [sys.executable, "-m", "dojo_cli", *args], input=input, cwd=cwd or self.cwd, env=env, capture_output=True, text=True, timeout=timeout
        )
        self.transcript.append(f"$ dojo {' '.join(args)}\n{done.stdout}{done.stderr}".rstrip() + f"\n[exit {done.returncode}]")
        return done
