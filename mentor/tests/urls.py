"""The site's URLs plus a bare page holding the ask box, for the browser test
(the real pages include the box once the frontend does)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template import RequestContext, Template
from django.urls import include, path

from exercises.models import Module

PAGE = Template(
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Ask box</title></head>'
    '<body><main>{% include "mentor/ask_box.html" with module=module %}</main></body></html>'
)


def box(request: HttpRequest, slug: str) -> HttpResponse:
    module = get_object_or_404(Module, slug=slug)
    return HttpResponse(PAGE.render(RequestContext(request, {"module": module})))


urlpatterns = [
    path("mentor-test/box/<slug:slug>/", box),
    path("", include("config.urls")),
]
