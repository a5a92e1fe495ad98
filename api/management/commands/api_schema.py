"""Write the API's OpenAPI schema to api/openapi.json (committed; api/tests/test_schema.py checks it is current)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from api.endpoints import api

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "openapi.json"


def schema_text() -> str:
    # The server's own address is left out: the committed file must not depend on who generated it.
    schema = api.get_openapi_schema(path_prefix="/api/v1")
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


class Command(BaseCommand):
    help = "Write the API's OpenAPI schema to api/openapi.json."

    def handle(self, *args: Any, **options: Any) -> None:
        SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
        self.stdout.write(f"wrote {SCHEMA_FILE}")
