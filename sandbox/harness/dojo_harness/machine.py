"""What machine a job was graded on: device, torch, CUDA, Python, image.

Collected by the harness after the tests (so asking CUDA never precedes a
fork: every learner process was forked from the launcher, which never
touches CUDA) and sent in the report. The host treats it as hostile text
(``sandbox.report.parse_machine``): the learner shares this container.
"""

from __future__ import annotations

import os
import platform
from typing import Any

# Read at import, before the harness drops privileges and clears its environment.
IMAGE = os.environ.get("DOJO_IMAGE", "")


def facts() -> dict[str, Any]:
    """The machine's facts as short strings; ``gpu`` says whether a GPU was visible."""
    import torch

    gpu = bool(torch.cuda.is_available())
    device = torch.cuda.get_device_name(0) if gpu else f"CPU ({platform.machine() or 'unknown'})"
    return {
        "device": device,
        "gpu": gpu,
        "torch": str(torch.__version__),
        "cuda": str(torch.version.cuda or "none"),
        "python": platform.python_version(),
        "image": IMAGE,
    }
