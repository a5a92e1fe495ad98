"""Small server-side SVG charts: no chart library, no JavaScript.

Labels are escaped here; the result is marked safe for templates. Colours
come from the site's CSS variables, so the charts follow the theme.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

from django.utils.safestring import SafeString, mark_safe

Formatter = Callable[[float], str]

# Bar labels start at the left edge (so they are never clipped there), have
# at most this many characters, each at most about this wide at the charts'
# 12 px font (a generous bound; a browser test measures real names).
LABEL_CHARS = 40
LABEL_CHAR_W = 9.5


def percent(value: float) -> str:
    return f"{value * 100:.0f}%"


def number(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.2f}"


def seconds(value: float) -> str:
    return f"{value:.2f} s" if value < 10 else f"{value:.0f} s"


def _empty(title: str) -> SafeString:
    return mark_safe(f'<p class="chart-empty" role="note">{escape(title)}: no data yet.</p>')  # escaped above


def bar_chart(rows: Sequence[tuple[str, float]], *, title: str, fmt: Formatter = number, classes: Sequence[str] | None = None) -> SafeString:
    """Horizontal bars, one row per label."""
    if not rows:
        return _empty(title)
    top = max(value for _, value in rows) or 1.0
    shorts = [label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…" for label, _ in rows]
    # Room for the longest label: a fixed width clipped long test names on the left.
    label_w = max(120, math.ceil(max(len(short) for short in shorts) * LABEL_CHAR_W) + 14)
    bar_w, row_h = 300, 24
    height = row_h * len(rows) + 8
    parts = [f'<svg class="chart" viewBox="0 0 {label_w + bar_w + 80} {height}" role="img" aria-label="{escape(title)}">'
             f"<title>{escape(title)}</title>"]
    for index, (label, value) in enumerate(rows):
        y = 4 + index * row_h
        width = max(1.0, bar_w * value / top) if value else 0.0
        css = f"bar {escape(classes[index])}" if classes else "bar"
        short = shorts[index]
        parts.append(
            f'<text class="label" x="4" y="{y + 16}"><title>{escape(label)}</title>{escape(short)}</text>'
            f'<rect class="{css}" x="{label_w}" y="{y + 3}" width="{width:.1f}" height="{row_h - 8}" rx="2"/>'
            f'<text class="value" x="{label_w + width + 6:.1f}" y="{y + 16}">{escape(fmt(value))}</text>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # every label and value escaped above


def line_chart(points: Sequence[tuple[str, float]], *, title: str, fmt: Formatter = percent, y_max: float = 1.0,
               counts: Sequence[int] | None = None) -> SafeString:
    """A line over labelled points (dates), y from 0 to ``y_max``."""
    if not points:
        return _empty(title)
    left, right, top_pad, bottom, width, height = 48, 16, 12, 40, 620, 220
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    step = plot_w / max(1, len(points) - 1)
    coords = []
    for index, (_, value) in enumerate(points):
        x = left + (index * step if len(points) > 1 else plot_w / 2)
        y = top_pad + plot_h * (1 - min(value, y_max) / y_max)
        coords.append((x, y))
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>']
    for fraction in (0.0, 0.5, 1.0):
        y = top_pad + plot_h * (1 - fraction)
        parts.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}"/>'
                     f'<text class="axis" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(fmt(fraction * y_max))}</text>')
    if len(coords) > 1:
        path = " ".join(f"{'M' if index == 0 else 'L'}{x:.1f},{y:.1f}" for index, (x, y) in enumerate(coords))
        parts.append(f'<path class="line" d="{path}"/>')
    every = max(1, len(points) // 8)
    for index, ((label, value), (x, y)) in enumerate(zip(points, coords, strict=True)):
        note = f"{label}: {fmt(value)}" + (f" of {counts[index]}" if counts else "")
        parts.append(f'<circle class="dot" cx="{x:.1f}" cy="{y:.1f}" r="3.5"><title>{escape(note)}</title></circle>')
        if index % every == 0 or index == len(points) - 1:
            parts.append(f'<text class="axis" x="{x:.1f}" y="{height - bottom + 18}" text-anchor="middle">{escape(label)}</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # every label and value escaped above
