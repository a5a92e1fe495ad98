"""The answer to a login refused after too many failed tries (django-axes).

``AXES_FAILURE_LIMIT`` wrong passwords for one name from one address lock
that pair out for ``AXES_COOLOFF_TIME``: a guesser gets that many tries per
cool-off, and a learner who mistypes locks out only their own name from
their own address, never their classmates behind the same network.
"""

from __future__ import annotations

import math
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def cool_off_seconds() -> int:
    return math.ceil(settings.AXES_COOLOFF_TIME.total_seconds())


def locked_out(request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict[str, Any] | None = None) -> HttpResponse:
    """429 in the site's layout, saying how long to wait, with an honest Retry-After."""
    seconds = cool_off_seconds()
    response = render(
        request, "registration/locked_out.html", {"minutes": math.ceil(seconds / 60), "failure_limit": settings.AXES_FAILURE_LIMIT}, status=429
    )
    response["Retry-After"] = str(seconds)
    return response
