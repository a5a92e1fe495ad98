"""Template context: whether to show the Author link."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from core.roles import is_instructor


def roles(request: HttpRequest) -> dict[str, Any]:
    # Lazy: the group lookup runs only on pages that render the link.
    return {"can_author": lambda: is_instructor(request.user)}
