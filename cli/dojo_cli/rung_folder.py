"""A fetched rung on disk: its files and ``.dojo.json`` (the slug, version and size limit it was fetched at)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import CliError

STATE_FILE = ".dojo.json"
SOLUTION = "solution.py"


@dataclass(frozen=True)
class RungFolder:
    path: Path
    slug: str
    version: int
    max_code_bytes: int
    url: str

    @property
    def solution(self) -> Path:
        return self.path / SOLUTION

    def read_solution(self) -> str:
        try:
            data = self.solution.read_bytes()
        except FileNotFoundError:
            raise CliError(f"{self.solution} is missing: write your solution there (or `dojo fetch {self.slug} --force`).") from None
        if len(data) > self.max_code_bytes:
            raise CliError(f"{self.solution} is {len(data):,} bytes; the limit is {self.max_code_bytes:,} bytes. Make it smaller before sending it.")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise CliError(f"{self.solution} is not UTF-8 text.") from None


def write_rung(folder: Path, rung: dict[str, Any], solution: str, *, force: bool) -> list[str]:
    """Write the rung's files into ``folder``; ``solution.py`` only when missing (or ``force``). Returns the names written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    files = {"instructions.md": rung["instructions_md"], **rung["files"]}
    for name, text in files.items():
        if "/" in name or "\\" in name or name.startswith("."):
            continue  # a file name the server should never send: nothing is written outside the folder
        (folder / name).write_text(text, encoding="utf-8")
        written.append(name)
    target = folder / SOLUTION
    if force or not target.exists():
        target.write_text(solution, encoding="utf-8")
        written.append(SOLUTION)
    state = {"slug": rung["slug"], "version": rung["version"], "max_code_bytes": rung["max_code_bytes"], "url": rung["url"]}
    (folder / STATE_FILE).write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    return written


def find_rung(start: Path) -> RungFolder:
    """The fetched rung folder at ``start`` or above it."""
    for folder in (start, *start.parents):
        state = folder / STATE_FILE
        if state.is_file():
            data = json.loads(state.read_text(encoding="utf-8"))
            return RungFolder(folder, str(data["slug"]), int(data["version"]), int(data["max_code_bytes"]), str(data["url"]))
    raise CliError("Not in a fetched rung's folder: run `dojo fetch RUNG` and cd into it (or pass the folder).")
