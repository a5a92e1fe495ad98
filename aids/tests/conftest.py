"""Fixtures of the aids' tests: the shipped catalog's first rung, and logged-in clients."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def rung(catalog: Any) -> Any:
    from exercises.models import Rung

    return Rung.objects.select_related("current_version").get(slug="kv-cache-size")


@pytest.fixture
def learner_client(client: Any, learner: Any) -> Any:
    client.force_login(learner)
    return client
