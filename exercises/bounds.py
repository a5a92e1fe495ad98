"""The database's bounds on what catalog files say, derived from the model fields.

A key of track.yaml, module.yaml or rung.yaml that is stored in a column
must fit it: a CharField's max_length, an integer field's range. The
pydantic schema (exercises.schema) says what a value means; this says what
the database holds, read from the models, so a new column's bound needs no
second copy. An out-of-range ``order: 100000000000000000000`` was an
OverflowError at the insert (SQLite) and a too-long string a DataError
(PostgreSQL): 500s instead of a refusal naming the file and key (issue 55).

Integer ranges are the portable ones (PostgreSQL's, the narrowest of the
engines), so a catalog loaded on SQLite also loads on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.apps import apps
from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations

# Keys stored under another column name.
_COLUMN_OF_KEY = {"id": "external_id"}
# Which tables each file's keys land in.
_MODELS_OF_FILE = {"TrackMeta": ("Track",), "ModuleMeta": ("Module",), "RungMeta": ("Rung", "RungVersion")}

Bound = tuple[int | None, int | None, int | None]  # (lowest, highest, max length)


def column_bounds(model: type[models.Model]) -> dict[str, Bound]:
    """Each key's bounds in ``model``'s table, by the name files use."""
    keys = {column: key for key, column in _COLUMN_OF_KEY.items()}
    bounds: dict[str, Bound] = {}
    for field in model._meta.concrete_fields:
        if field.is_relation:
            continue
        key = keys.get(field.name, field.name)
        if isinstance(field, models.IntegerField):
            low, high = BaseDatabaseOperations.integer_field_ranges[field.get_internal_type()]
            bounds[key] = (low, high, None)
        elif isinstance(field, models.CharField) and field.max_length is not None:
            bounds[key] = (None, None, field.max_length)
    return bounds


def _problem(value: Any, bound: Bound) -> str | None:
    low, high, length = bound
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and low is not None and high is not None:
        if value > high:
            return f"at most {high}"
        if value < low:
            return f"at least {low}"
    if isinstance(value, str) and length is not None and len(value) > length:
        return f"at most {length} characters (it has {len(value):,})"
    return None


def problems_of(kind: str, values: Mapping[str, Any]) -> list[str]:
    """``key 'name': at most N`` for each value of a ``kind`` file (a schema class name) that its column cannot hold."""
    problems = []
    for model_name in _MODELS_OF_FILE.get(kind, ()):
        bounds = column_bounds(apps.get_model("exercises", model_name))
        for key, value in values.items():
            if key in bounds and (problem := _problem(value, bounds[key])):
                text = f"key '{key}': {problem}"
                if text not in problems:
                    problems.append(text)
    return problems
