from __future__ import annotations

from frontend.markdown import render_markdown


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
