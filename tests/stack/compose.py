"""What docker-compose.yml runs, as command lines and environments for one machine.

The stack test starts the compose file's own ``command`` and ``environment``,
read from the file each time, so a change there changes what the test runs.
Only what differs between containers and one machine is mapped, each mapping
named by the caller: a port to bind, a file path, the address of a service
(compose's ``postgres`` and ``redis`` hosts). An option the caller maps that
the compose command no longer has, or a variable that points at a compose
host the caller did not map, fails loudly instead of running something else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
# ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?error}, ${NAME?error}
_VARIABLE = re.compile(r"\$\{(?P<name>\w+)(?:(?P<colon>:?)(?P<op>[-?])(?P<arg>[^}]*))?\}")


class ComposeDrift(AssertionError):
    """docker-compose.yml no longer has what the stack test maps."""


def services() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE_FILE.read_text())  # PyYAML resolves the x-app anchors and `<<` merges
    return dict(loaded["services"])


def command(service: str, *, replace: Mapping[str, str] | None = None, append: tuple[str, ...] = ()) -> list[str]:
    """The service's ``command``, the value after each option in ``replace``
    swapped (e.g. ``--bind``), then ``append`` added (e.g. ``-n name``)."""
    argv = [str(part) for part in services()[service]["command"]]
    for option, value in (replace or {}).items():
        if option not in argv or argv.index(option) == len(argv) - 1:
            raise ComposeDrift(f"docker-compose.yml's {service} command has no {option} VALUE any more: {argv}")
        argv[argv.index(option) + 1] = value
    return argv + list(append)


def _interpolate(text: str, variables: Mapping[str, str]) -> str:
    """Compose's variable syntax, resolved from ``variables`` (compose reads the shell's)."""

    def value(match: re.Match[str]) -> str:
        name, op, arg = match["name"], match["op"], match["arg"]
        given = variables.get(name)
        unset = given is None or (match["colon"] == ":" and given == "")
        if not unset:
            return str(given)
        if op == "-":
            return str(arg)
        raise ComposeDrift(f"docker-compose.yml requires ${name} ({arg or 'no message'}); pass it in variables")

    return _VARIABLE.sub(value, text)


def environment(service: str, *, variables: Mapping[str, str], hosts: Mapping[str, str]) -> dict[str, str]:
    """The service's ``environment`` with compose's ``${...}`` resolved from
    ``variables``, then each variable of ``hosts`` replaced by this machine's
    value. A remaining value that names another compose service as a host
    (``@postgres:``, ``//redis:``) is a mapping the caller forgot."""
    raw = services()[service].get("environment") or {}
    env = {str(key): _interpolate(str(value), variables) for key, value in raw.items()}
    for key in hosts:
        if key not in env:
            raise ComposeDrift(f"docker-compose.yml's {service} no longer sets {key}")
    env.update(hosts)
    names = "|".join(re.escape(name) for name in services())
    pointing = re.compile(rf"(?:@|//)(?:{names})(?::|/|$)")
    unmapped = sorted(key for key, value in env.items() if pointing.search(value))
    if unmapped:
        raise ComposeDrift(f"docker-compose.yml's {service} points {unmapped} at compose hosts; the stack test must map them")
    return env
