"""Markdown to safe HTML for catalog text (authors' text is still sanitised)."""

from __future__ import annotations

import markdown as md
import nh3
from django.utils.safestring import SafeString, mark_safe

_ALLOWED_TAGS = {
    "p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li", "a", "h1", "h2", "h3", "h4",
    "table", "thead", "tbody", "tr", "th", "td", "span", "div", "sup", "sub",
}


def render_markdown(text: str) -> SafeString:
    html = md.markdown(text, extensions=["fenced_code", "tables", "sane_lists"], output_format="html")
    clean = nh3.clean(html, tags=_ALLOWED_TAGS, attributes={"a": {"href", "title"}, "code": {"class"}, "span": {"class"}, "div": {"class"}})
    return mark_safe(clean)
