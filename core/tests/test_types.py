from __future__ import annotations

from django.contrib.auth import get_user_model

from core.types import User


def test_the_user_alias_is_the_auth_user_model():
    assert User is get_user_model()
