"""Request bodies are UTF-8, or refused before anything reads them.

Django decodes form fields with the charset the request's Content-Type names.
A multipart form declaring ``charset=unicode_escape`` turned ``\\ud800`` in a
field into a lone surrogate, and every form that hashes a password or stores
text (login, sign-up, password reset and change, drafts, the mentor) then
failed with a 500. Every page and script of this site sends UTF-8, so any
other charset is refused with a 400 that says so.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest

NOT_UTF8 = "Send the request body in UTF-8 (its Content-Type names another charset)."
BODILESS = ("GET", "HEAD", "OPTIONS", "TRACE")


def declares_utf8(charset: str) -> bool:
    try:
        return codecs.lookup(charset.strip().strip('"')).name == "utf-8"
    except LookupError:
        return False


class Utf8BodiesOnly:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        charset = (request.content_params or {}).get("charset")
        if request.method not in BODILESS and charset is not None and not declares_utf8(charset):
            return HttpResponseBadRequest(NOT_UTF8, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
