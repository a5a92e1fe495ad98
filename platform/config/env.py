"""Strict parsers for settings read from the environment.

Each returns the default when the variable is unset (or empty) and raises
ImproperlyConfigured naming the variable when its value is malformed:
``SANDBOX_GPU_ENABLED=ture`` stops start-up instead of silently becoming
False (django-environ's ``bool`` treats every unknown word as False).
"""

from __future__ import annotations

import os
from typing import NoReturn
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off"})


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def _bad(name: str, value: str, expected: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"{name}={value!r} is not {expected}")


def env_str(name: str, default: str = "") -> str:
    value = os.environ.get(name)
    return default if value is None else value


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    if value.lower() in TRUE:
        return True
    if value.lower() in FALSE:
        return False
    return _fail(_bad(name, value, "a boolean (true/false, 1/0, yes/no, on/off)"))


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    value = _raw(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        return _fail(_bad(name, value, "a whole number"))
    if minimum is not None and number < minimum:
        return _fail(_bad(name, value, f"a whole number >= {minimum}"))
    if maximum is not None and number > maximum:
        return _fail(_bad(name, value, f"a whole number <= {maximum}"))
    return number


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    value = _raw(name)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        return _fail(_bad(name, value, "a number"))
    if number != number or number in (float("inf"), float("-inf")):
        return _fail(_bad(name, value, "a finite number"))
    if minimum is not None and number < minimum:
        return _fail(_bad(name, value, f"a number >= {minimum}"))
    return number


def env_url(name: str, default: str, *, schemes: tuple[str, ...], allow_empty: bool = False) -> str:
    """A URL with one of ``schemes`` and a host (or a path, for file-like schemes such as sqlite and unix)."""
    value = os.environ.get(name)
    if value is None:
        return default
    value = value.strip()
    if not value:
        if allow_empty:
            return ""
        return _fail(_bad(name, value, f"a URL ({'/'.join(schemes)})"))
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return _fail(_bad(name, value, f"a URL ({'/'.join(schemes)})"))
    if parts.scheme not in schemes or not (parts.hostname or parts.path):
        return _fail(_bad(name, value, f"a URL with scheme {' or '.join(schemes)}"))
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def _fail(error: ImproperlyConfigured) -> NoReturn:
    raise error
