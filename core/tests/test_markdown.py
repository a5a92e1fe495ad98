from __future__ import annotations

import html as html_module
from html.parser import HTMLParser

import pytest

from core.markdown import render_markdown


def test_math_is_left_for_katex_untouched_by_markdown():
    html = render_markdown(r"Cache grows by $2 \times n_{kv} \times d_{head}$ bytes, and $$\frac{a_1}{b_2} \{x\}$$")
    assert r"$2 \times n_{kv} \times d_{head}$" in html
    assert r"$$\frac{a_1}{b_2} \{x\}$$" in html
    assert "<em>" not in html


def test_math_is_escaped_when_put_back():
    html = render_markdown("$a < b$ and $<script>alert(1)</script>$")
    assert "$a &lt; b$" in html
    assert "<script>" not in html


def test_a_dollar_in_code_is_not_math():
    html = render_markdown("Run `echo $HOME $PATH` and\n\n```\nx = '$a_b$'\n```\n")
    assert "<code>echo $HOME $PATH</code>" in html
    assert "x = '$a_b$'" in html


def test_inline_math_may_wrap_a_line_but_not_a_paragraph():
    html = render_markdown("from $s +\n\\text{out}$ on\n\nCosts $5.\n\nAnd $3 more.")
    assert "$s +\n\\text{out}$" in html
    assert "Costs $5." in html and "And $3 more." in html


class _Attributes(HTMLParser):
    """Every (tag, attribute) pair a browser would see in a piece of HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[tuple[str, str]] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.seen.update((tag, name) for name, _ in attrs)


def _attributes(html: str) -> set[tuple[str, str]]:
    parser = _Attributes()
    parser.feed(html)
    parser.close()
    return parser.seen


# Math put back inside an attribute value: a quote in it must not end the value.
BREAKOUTS = [
    '[hi](http://x.invalid/ "$" tabindex=0 autofocus onfocus="alert(document.domain)" x=$")',
    '[click](http://x/$" onmouseover="alert(document.cookie)" x="$)',
    '<a href="http://x" title="$" style="position:fixed" onmouseover="alert(1)$">x</a>',
    '<span class="$x" onmouseover="alert(1) y$">hover</span>',
    "<span class='$x' onmouseover='alert(1) y$'>hover</span>",
    '<div class="\\(x" onclick="alert(1)\\)">d</div>',
]


@pytest.mark.parametrize("source", BREAKOUTS)
def test_math_inside_an_attribute_cannot_add_an_attribute(source: str) -> None:
    html = render_markdown(source)
    allowed = {("a", "href"), ("a", "title"), ("a", "rel"), ("span", "class"), ("div", "class"), ("code", "class")}
    assert _attributes(html) <= allowed, html


def test_math_in_text_still_reads_as_typed_after_the_quote_escape() -> None:
    html = render_markdown('Say $\\text{"hi"} + x\'$ here')
    assert "$\\text{&quot;hi&quot;} + x&#x27;$" in html
    assert html_module.unescape(html).count('$\\text{"hi"} + x\'$') == 1
