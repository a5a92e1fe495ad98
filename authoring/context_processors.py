"""Template context: whether to show the Author link."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from .content_roles import may_open_authoring


def roles(request: HttpRequest) -> dict[str, Any]:
    # Lazy: the lookups run only on pages that render the link.
    return {"can_author": lambda: may_open_authoring(request.user)}
