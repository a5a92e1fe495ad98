"""The Prometheus endpoint, ``/metrics``: only for a scraper holding ``METRICS_TOKEN``.

``Authorization: Bearer <METRICS_TOKEN>``, compared in constant time. With
no token set the endpoint does not exist (404); a request without the right
token gets 401 and nothing else. Counters come from this process's registry,
or in multiprocess mode from every process sharing the folder
(``core.metrics``); queue depth and jobs in flight are read now
(``grader.metrics``).
"""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest

from core.metrics import shared_registry
from grader.metrics import ScrapeTimeCollector


def _authorised(request: HttpRequest, token: str) -> bool:
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    token = settings.METRICS_TOKEN
    if not token:
        raise Http404("No metrics here.")
    if not _authorised(request, token):
        response = HttpResponse("A bearer token is required.\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    now = CollectorRegistry()
    now.register(ScrapeTimeCollector())
    counted = shared_registry() or REGISTRY
    return HttpResponse(generate_latest(counted) + generate_latest(now), content_type=CONTENT_TYPE_LATEST)
