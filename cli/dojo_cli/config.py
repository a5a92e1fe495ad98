"""Where ``dojo login`` keeps the server and the token: the user's config dir, mode 0600."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import CliError


def config_dir() -> Path:
    if os.environ.get("DOJO_CONFIG_DIR"):
        return Path(os.environ["DOJO_CONFIG_DIR"])
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        return Path(os.environ["APPDATA"]) / "dojo"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "dojo"
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "dojo"


def config_file() -> Path:
    return config_dir() / "config.json"


@dataclass(frozen=True)
class Login:
    server: str
    token: str


def save_login(login: Login) -> Path:
    """Write the login with mode 0600 from the start (never a moment readable by others)."""
    path = config_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump({"server": login.server, "token": login.token}, out)
    os.chmod(path, 0o600)  # an older file keeps its mode through O_TRUNC
    return path


def load_login() -> Login:
    path = config_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Login(server=str(data["server"]), token=str(data["token"]))
    except FileNotFoundError:
        raise CliError("Not logged in: run `dojo login SERVER_URL` first.") from None
    except (ValueError, KeyError, TypeError):
        raise CliError(f"{path} is not a dojo login: run `dojo login SERVER_URL` again.") from None
