"""What the grading host is, read on the worker's side, never from a job's report.

A speed rung's leaderboard compares ratios per machine kind (issue 60, item
7). The harness's ``machine`` facts come from inside the container that ran
learner code; the CPU model is read here instead, from the worker's own
``/proc/cpuinfo`` (the host kernel's: a container does not virtualise it),
so no job can name the machine it was measured on.
"""

from __future__ import annotations

import functools
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
# The longest model name kept: the same cap as the report's machine facts.
MAX_CPU_TEXT = 120


def cpu_model_from(text: str) -> str:
    """The first ``model name`` of a cpuinfo text (or an Arm ``Hardware``/``CPU part`` line), one clean line; "" if none."""
    for key in ("model name", "Hardware", "Model", "CPU part"):
        for line in text.splitlines():
            name, sep, value = line.partition(":")
            if sep and name.strip() == key and value.strip():
                words = " ".join("".join(ch if ch.isprintable() else " " for ch in value).split())
                return words[:MAX_CPU_TEXT]
    return ""


@functools.cache
def cpu_model() -> str:
    """This host's CPU model, e.g. "AMD EPYC 7B13 64-Core Processor"; "" when unreadable. Read once per process."""
    try:
        return cpu_model_from(CPUINFO.read_text(encoding="utf-8", errors="replace")[:1_000_000])
    except OSError:
        return ""
