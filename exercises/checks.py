"""System checks: a broken catalog is reported at start-up, naming the file."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, register

from .exceptions import CatalogError
from .loader import check_in_app_sources, read_catalog


@register()
def check_catalog(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    try:
        check_in_app_sources(read_catalog(settings.EXERCISES_DIR))
    except CatalogError as exc:
        return [Error(str(exc), hint="Fix the file, then run `manage.py load_exercises`.", id="exercises.E001")]
    return []
