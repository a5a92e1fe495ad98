from __future__ import annotations

import pytest

from tests.security.support import Sandbox


@pytest.fixture(scope="session")
def sandbox(sandbox_image: str) -> Sandbox:
    return Sandbox(sandbox_image)
