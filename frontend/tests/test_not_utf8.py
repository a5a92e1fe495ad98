"""Bodies that are not UTF-8 are refused in words, never decoded into text the site cannot store."""

from __future__ import annotations

import pytest
from django.test import Client

from frontend.middleware import NOT_UTF8
from grader.messages import CODE_NOT_TEXT
from grader.models import Submission

pytestmark = pytest.mark.django_db


def _multipart(charset: str | None = None, **fields: str) -> tuple[bytes, str]:
    parts = b"".join(b'--XX\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n' % (name.encode(), value.encode("utf-8", "surrogateescape"))
                     for name, value in fields.items())
    content_type = "multipart/form-data; boundary=XX" + (f'; charset="{charset}"' if charset else "")
    return parts + b"--XX--\r\n", content_type


def test_a_body_in_another_charset_is_refused_before_any_form_reads_it(kv_rung, learner, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # unicode_escape turns the text \ud800 into a lone surrogate: password hashing and the database both failed on it (500s).
    surrogate = "\\ud800"
    anonymous, lena = Client(raise_request_exception=False), Client(raise_request_exception=False)
    lena.force_login(learner)
    posts = [
        (anonymous, "/accounts/login/", {"username": "lena", "password": "x" + surrogate}),
        (anonymous, "/signup/", {"username": "zed", "password1": "Very-strong-pass" + surrogate, "password2": "Very-strong-pass" + surrogate}),
        (anonymous, "/accounts/password_reset/", {"email": "a" + surrogate + "@example.com"}),
        (lena, "/accounts/password_change/", {"old_password": "x", "new_password1": "Another" + surrogate, "new_password2": "Another" + surrogate}),
        (lena, f"/rungs/{kv_rung.slug}/draft", {"code": "x = 1" + surrogate}),
        (lena, "/mentor/ask", {"module": kv_rung.module.slug, "question": "what is a kv cache" + surrogate}),
    ]
    for client, url, fields in posts:
        for charset in ("unicode_escape", "latin-1", "no-such-charset"):
            body, content_type = _multipart(charset, **fields)
            response = client.post(url, data=body, content_type=content_type)
            assert (response.status_code, response.content.decode()) == (400, NOT_UTF8), (url, charset)


def test_utf8_named_in_any_spelling_is_accepted(kv_rung, learner):
    lena = Client()
    lena.force_login(learner)
    for charset in ("utf-8", "UTF8", "utf_8"):
        body, content_type = _multipart(charset, code=f"# {charset}\n")
        assert lena.post(f"/rungs/{kv_rung.slug}/draft", data=body, content_type=content_type).status_code == 200, charset


def test_code_whose_bytes_are_not_utf8_is_refused_not_changed_in_a_multipart_form_too(kv_rung, learner, enqueued):
    lena = Client()
    lena.force_login(learner)
    bad = "s = '\udcff\udcfe'\n"  # the bytes FF FE: not UTF-8
    for url, extra in ((f"/rungs/{kv_rung.slug}/run", {"version": str(kv_rung.current_version.number)}), (f"/rungs/{kv_rung.slug}/draft", {})):
        body, content_type = _multipart(code=bad, **extra)
        response = lena.post(url, data=body, content_type=content_type)
        assert (response.status_code, response.json()["error"]) == (400, CODE_NOT_TEXT), url
    assert not Submission.objects.exists()
