"""The Content-Security-Policy: scripts run only from the site's own files.

A defence behind the Markdown sanitiser and the templates' escaping: if
markup ever slips past them (a red-team found an event handler that did,
core/markdown.py), the browser still refuses to run it. So no page may
need an inline script or an event-handler attribute either; the browser
tests fail on the console error a refused script would log.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APPS = ("frontend", "authoring", "grader", "mentor", "lti", "aids", "exercises")
TEMPLATES = sorted(path for app in APPS for path in (ROOT / app).glob("templates/**/*.html"))

# An opening <script> tag without src (not a JSON data block), or an on...= attribute.
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I)
HANDLER = re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.I | re.S)


def _directives(header: str) -> dict[str, list[str]]:
    parts = (part.split() for part in header.split(";") if part.strip())
    return {words[0]: words[1:] for words in parts}


def test_the_templates_were_found() -> None:
    assert len(TEMPLATES) > 20 and any(path.name == "base.html" for path in TEMPLATES)


@pytest.mark.parametrize("template", TEMPLATES, ids=[str(path.relative_to(ROOT)) for path in TEMPLATES])
def test_no_template_needs_an_inline_script_or_an_event_handler(template: Path) -> None:
    text = template.read_text()
    assert not INLINE_SCRIPT.search(text), f"{template}: an inline <script>; put it in a static file"
    assert not HANDLER.search(text), f"{template}: an on...= attribute; listen from a static script"


def test_the_patterns_catch_what_they_are_for() -> None:
    assert INLINE_SCRIPT.search('<script>alert(1)</script>') and HANDLER.search('<form class="x" onsubmit="go()">')
    assert not INLINE_SCRIPT.search("<script src=\"/static/a.js\"></script>")
    assert not INLINE_SCRIPT.search('<script id="x" type="application/json">{}</script>')
    assert not HANDLER.search('<div data-confirm="x" aria-controls="y">')


@pytest.mark.parametrize("path", ["/", "/modules/inference-and-serving/", "/rungs/kv-cache-size/", "/accounts/login/", "/admin/login/"])
def test_every_page_forbids_inline_and_foreign_scripts(catalog, learner_client, path: str) -> None:
    response = learner_client.get(path, follow=True)
    assert response.status_code == 200, (path, response.status_code)
    directives = _directives(response["Content-Security-Policy"])
    assert directives["script-src"] == ["'self'"], directives
    assert directives["object-src"] == ["'none'"] and directives["base-uri"] == ["'self'"], directives
    assert "'unsafe-inline'" not in directives["default-src"], directives
