"""The regular expressions that read text a learner or an instructor typed.

Python's ``re`` backtracks: a pattern with two quantifiers that can take the
same characters (``\\s*-?\\s*``) tries every way of sharing a run between
them, and one 1,000-character question held the database for 55 s that way.
Every pattern that reads such text is compiled through ``untrusted`` with
the longest text it may be given; core/tests/test_untrusted_patterns.py times
each one on generated worst cases at that length (under 50 ms each), and
fails on a module-level pattern in the product code that is neither
registered here nor listed there as reading only our own text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class UntrustedPattern:
    pattern: re.Pattern[str]
    max_chars: int  # the longest text it is given (the form's or the file's cap)
    reads: str  # whose text, in words, for the test's failure message


REGISTRY: list[UntrustedPattern] = []


def untrusted(source: str, *, max_chars: int, reads: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, registered for the worst-case test at ``max_chars``."""
    pattern = re.compile(source, flags)
    REGISTRY.append(UntrustedPattern(pattern, max_chars, reads))
    return pattern
