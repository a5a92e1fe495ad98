"""Types the apps share: the user model, and the requests that carry one."""

from __future__ import annotations

from typing import TypeAlias

from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.models import User as User  # the AUTH_USER_MODEL class (core/tests/test_types.py)
from django.http import HttpRequest

# Who is looking at a page that does not require a login.
Visitor: TypeAlias = "User | AnonymousUser"


class AuthenticatedHttpRequest(HttpRequest):
    """The request a view behind ``login_required`` (or a role check) gets: its user is signed in."""

    user: User
