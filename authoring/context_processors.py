"""Template context: whether to show the Author link."""

from __future__ import annotations

import functools
from typing import Any

from django.http import HttpRequest

from .content_roles import may_open_authoring


def roles(request: HttpRequest) -> dict[str, Any]:
    # Lazy: the lookups run only on pages that render the link; and once a
    # request, however often a page asks (the module page shows authors the ids).
    @functools.cache
    def can_author() -> bool:
        return may_open_authoring(request.user)

    return {"can_author": can_author}
