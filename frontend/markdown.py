"""Markdown to safe HTML for catalog text (authors' text is still sanitised).

Math (``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``) is set aside before
Markdown runs, so that ``_``, ``*`` and backslashes inside it are not taken
for emphasis or escapes, and put back afterwards as escaped text; KaTeX's
auto-render (static/frontend/math.bundle.js) typesets it in the browser.

The math goes back after sanitising, so its escape must hold wherever a
token landed, quotes included: a token inside an attribute value (a link's
title, a span's class) must not end that value and start an attribute of
the author's choosing (an event handler).
"""

from __future__ import annotations

import html
import re

import markdown as md
import nh3
from django.utils.safestring import SafeString, mark_safe

_ALLOWED_TAGS = {
    "p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li", "a", "h1", "h2", "h3", "h4",
    "table", "thead", "tbody", "tr", "th", "td", "span", "div", "sup", "sub",
}

# Code is left alone: a `$` in code is a dollar sign.
_CODE = re.compile(r"^(?:```|~~~).*?^(?:```|~~~)[ \t]*$|`[^`\n]+`", re.S | re.M)
# Display first; inline math may wrap lines but never crosses a blank line.
_MATH = re.compile(
    r"\$\$.+?\$\$"
    r"|\\\[.+?\\\]"
    r"|\\\(.+?\\\)"
    r"|\$(?=\S)(?:[^$\n]|\n(?![ \t]*\n))+?\$",
    re.S,
)
_TOKEN = "dojomath{}x"
_TOKEN_RE = re.compile(r"dojomath(\d+)x")


def _protect_math(text: str) -> tuple[str, list[str]]:
    found: list[str] = []

    def stash(match: re.Match[str]) -> str:
        found.append(match.group(0))
        return _TOKEN.format(len(found) - 1)

    pieces = []
    position = 0
    for code in _CODE.finditer(text):
        pieces.append(_MATH.sub(stash, text[position : code.start()]))
        pieces.append(code.group(0))
        position = code.end()
    pieces.append(_MATH.sub(stash, text[position:]))
    return "".join(pieces), found


def render_markdown(text: str) -> SafeString:
    protected, maths = _protect_math(text)
    html_text = md.markdown(protected, extensions=["fenced_code", "tables", "sane_lists"], output_format="html")
    clean = nh3.clean(html_text, tags=_ALLOWED_TAGS, attributes={"a": {"href", "title"}, "code": {"class"}, "span": {"class"}, "div": {"class"}})
    if maths:
        clean = _TOKEN_RE.sub(lambda m: html.escape(maths[int(m.group(1))], quote=True) if int(m.group(1)) < len(maths) else m.group(0), clean)
    return mark_safe(clean)  # nh3-sanitised; the math put back is escaped
