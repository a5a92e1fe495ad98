from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from api import tokens
from api.constants import Scope


class TokenClient:
    """A test client that sends ``Authorization: Bearer <secret>`` on every request to /api/v1/."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.client = Client()

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.secret}"}

    def get(self, path: str, **params: Any) -> Any:
        return self.client.get(f"/api/v1{path}", params, headers=self._headers())

    def post(self, path: str, body: Any = None) -> Any:
        return self.client.post(f"/api/v1{path}", body or {}, content_type="application/json", headers=self._headers())

    def put(self, path: str, body: Any) -> Any:
        return self.client.put(f"/api/v1{path}", body, content_type="application/json", headers=self._headers())


def make_token(user: Any, scope: str = Scope.RUN_SUBMIT, days: int = 30) -> tokens.NewToken:
    return tokens.create_token(user=user, name="laptop", scope=scope, days=days)


@pytest.fixture
def learner_api(learner: Any) -> TokenClient:
    return TokenClient(make_token(learner).secret)


@pytest.fixture
def other_api(other_learner: Any) -> TokenClient:
    return TokenClient(make_token(other_learner).secret)
