"""Cells of a CSV download that a spreadsheet never runs as a formula."""

from __future__ import annotations

# A cell starting with one of these is a formula to Excel, LibreOffice and
# Google Sheets (OWASP's "CSV injection"); a username or a title may.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(text: str) -> str:
    """``text``, with a leading apostrophe when a spreadsheet would read it as a formula."""
    return f"'{text}" if text[:1] in FORMULA_STARTS else text
