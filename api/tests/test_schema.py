"""The committed OpenAPI schema (api/openapi.json) is the one the server serves."""

from __future__ import annotations

import json

from api.management.commands.api_schema import SCHEMA_FILE, schema_text


def test_the_committed_schema_is_current():
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), "run: python manage.py api_schema"


def test_the_server_serves_it(client):
    served = client.get("/api/v1/openapi.json")
    assert served.status_code == 200
    assert served.json()["paths"].keys() == json.loads(schema_text())["paths"].keys()
