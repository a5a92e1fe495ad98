"""Markdown to safe HTML for catalog text (authors' text is still sanitised).

Math (``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``) is set aside before
Markdown runs, so that ``_``, ``*`` and backslashes inside it are not taken
for emphasis or escapes, and put back afterwards as escaped text; KaTeX's
auto-render (static/frontend/math.bundle.js) typesets it in the browser.

The math goes back after sanitising, so its escape must hold wherever a
token landed, quotes included: a token inside an attribute value (a link's
title, a span's class) must not end that value and start an attribute of
the author's choosing (an event handler).

Every step is linear in the text (issue 55: Python-Markdown took 14 s on
12,000 ``[``, and a lazy pattern scanned to the end from each unclosed
``\\[``): the parser is markdown-it-py, the math is found by a scanner that
remembers which closing delimiters no longer occur, and the result is
cached by a hash of the text, since a page renders the same text for every
learner. core/tests/test_markdown_worst_case.py times the worst cases at
MARKDOWN_MAX_CHARS.
"""

from __future__ import annotations

import hashlib
import html
import re

import nh3
from django.core.cache import cache
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from .constants import MARKDOWN_MAX_CHARS
from .untrusted_patterns import untrusted
from .write_guard import outside_write_transaction

_ALLOWED_TAGS = {
    "p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li", "a", "h1", "h2", "h3", "h4",
    "table", "thead", "tbody", "tr", "th", "td", "span", "div", "sup", "sub",
}
_READS = "an author's Markdown"

# Code is left alone: a `$` in code is a dollar sign. A fence left open runs
# to the end, as the renderer reads it (and so no opener scans twice).
_CODE = untrusted(r"^(?:```|~~~).*?(?:^(?:```|~~~)[ \t]*$|\Z)|`[^`\n]+`", max_chars=MARKDOWN_MAX_CHARS, reads=_READS, flags=re.S | re.M)
# Where math may start; _math_end finds where it ends.
_MATH_OPENER = untrusted(r"\$\$|\\\[|\\\(|\$(?=\S)", max_chars=MARKDOWN_MAX_CHARS, reads=_READS)
# Inline math may wrap lines but never crosses a blank line.
_BLANK_LINE = untrusted(r"\n[ \t]*\n", max_chars=MARKDOWN_MAX_CHARS, reads=_READS)
_DISPLAY_CLOSERS = {"$$": "$$", "\\[": "\\]", "\\(": "\\)"}
_TOKEN = "dojomath{}x"
_TOKEN_RE = re.compile(r"dojomath(\d+)x")

# Bump when the HTML for the same text changes: cached renderings are then not used.
RENDER_VERSION = 2  # 2: markdown-it-py, linear math scan
CACHE_TIMEOUT_S = 24 * 3600

_PARSER = MarkdownIt("commonmark", {"html": True}).enable("table")


def _math_end(text: str, start: int, gone: dict[str, int]) -> int | None:
    """Where the math opened at ``start`` ends (one past its closer), or None when it does not close.

    The alternatives are tried in the order the old single pattern tried them.
    ``gone[closer]`` is a position from which ``closer`` no longer occurs:
    many unclosed openers then cost one scan, not one each.
    """
    for opener, closer in _DISPLAY_CLOSERS.items():
        if text.startswith(opener, start):
            search_from = start + len(opener) + 1  # at least one character of math
            if search_from < gone.get(closer, len(text) + 1):
                found = text.find(closer, search_from)
                if found != -1:
                    return found + len(closer)
                gone[closer] = search_from
    if text[start] == "$" and start + 1 < len(text) and not text[start + 1].isspace():
        search_from = start + 2
        if search_from < gone.get("$", len(text) + 1):
            found = text.find("$", start + 1)
            if found == -1:
                gone["$"] = start + 1
            elif found >= search_from and not _BLANK_LINE.search(text, start + 1, found):
                return found + 1
    return None


def _stash_math(text: str, found: list[str]) -> str:
    pieces = []
    gone: dict[str, int] = {}
    position = search = 0
    while (opener := _MATH_OPENER.search(text, search)) is not None:
        end = _math_end(text, opener.start(), gone)
        if end is None:
            search = opener.start() + 1
            continue
        pieces.append(text[position : opener.start()])
        found.append(text[opener.start() : end])
        pieces.append(_TOKEN.format(len(found) - 1))
        position = search = end
    pieces.append(text[position:])
    return "".join(pieces)


def _protect_math(text: str) -> tuple[str, list[str]]:
    found: list[str] = []
    pieces = []
    position = 0
    for code in _CODE.finditer(text):
        pieces.append(_stash_math(text[position : code.start()], found))
        pieces.append(code.group(0))
        position = code.end()
    pieces.append(_stash_math(text[position:], found))
    return "".join(pieces), found


def _render(text: str) -> str:
    protected, maths = _protect_math(text)
    html_text = _PARSER.render(protected).rstrip("\n")  # as Python-Markdown wrote it, which pages and tests compare
    clean = nh3.clean(html_text, tags=_ALLOWED_TAGS, attributes={"a": {"href", "title"}, "code": {"class"}, "span": {"class"}, "div": {"class"}})
    if maths:
        clean = _TOKEN_RE.sub(lambda m: html.escape(maths[int(m.group(1))], quote=True) if int(m.group(1)) < len(maths) else m.group(0), clean)
    return clean


@outside_write_transaction
def render_markdown(text: str) -> SafeString:
    """``text`` as sanitised HTML, from the cache when the same text was rendered before."""
    key = f"markdown:{RENDER_VERSION}:{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()}"
    rendered: str | None = cache.get(key)
    if rendered is None:
        rendered = _render(text)
        cache.set(key, rendered, CACHE_TIMEOUT_S)
    return mark_safe(rendered)  # nh3-sanitised; the math put back is escaped
