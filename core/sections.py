"""Cutting Markdown at headings, and the anchors the module page gives the pieces.

The mentor cuts its passages with the same functions, so a passage's link
lands on the section the page renders.
"""

from __future__ import annotations

from django.utils.text import slugify

from .constants import MARKDOWN_MAX_CHARS
from .untrusted_patterns import untrusted

# A heading's spaces and closing hashes are cut off in _heading_text: "(.+?)[ \t]*#*[ \t]*$"
# shared a line's trailing spaces three ways, cubic in its length.
_HEADING = untrusted(r"^(#{1,6})[ \t](.+)$", max_chars=MARKDOWN_MAX_CHARS, reads="a line of an author's Markdown")
_FENCE = untrusted(r"^[ \t]*(```|~~~)", max_chars=MARKDOWN_MAX_CHARS, reads="a line of an author's Markdown")


def _heading_text(rest: str) -> str:
    """A heading line's text after its opening hashes, without its closing ones."""
    lead = rest.lstrip(" \t")
    text = lead.rstrip(" \t").rstrip("#").rstrip(" \t")
    return (text or lead[:1]).strip()


def reference_anchor(heading: str) -> str:
    """The id the module page gives a quick-reference block: ``ref-<slug of its heading>``."""
    return f"ref-{slugify(heading)}"


def split_sections(markdown: str, levels: tuple[int, ...]) -> list[tuple[str | None, str]]:
    """``markdown`` cut at headings of the given levels: (heading or None for the text before the first, body).

    Fenced code is never cut, so a ``## comment`` inside a code block stays text.
    """
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    fence: str | None = None
    for line in markdown.splitlines():
        fence_match = _FENCE.match(line)
        if fence_match:
            marker = fence_match.group(1)
            fence = marker if fence is None else (None if marker == fence else fence)
        elif fence is None:
            heading = _HEADING.match(line)
            if heading and len(heading.group(1)) in levels:
                sections.append((_heading_text(heading.group(2)), []))
                continue
        sections[-1][1].append(line)
    result: list[tuple[str | None, str]] = []
    for title, lines in sections:
        body = "\n".join(lines).strip()
        if title is not None or body:
            result.append((title, body))
    return result
