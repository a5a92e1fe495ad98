"""GPU timing for a speed phase whose calls run on CUDA (issue 60).

Used only where the container sees a GPU (a ``gpu: preferred`` or
``required`` rung on a GPU worker); without one the speed phase times on the
CPU as before and nothing here touches CUDA.

Two sides, two processes:

* **The harness's** (``L2Flusher``, ``device_facts``): before every timed
  call it writes a buffer twice the size of the GPU's L2 cache (256 MiB when
  the size is unknown) and waits for it, so no call finds the previous one's
  data (or its own warm-up's) in L2. The L2 is the device's, shared by every
  process on it: flushed from here, the learner's process cannot skip it.
* **The learner's process** (``call_on_device``, run by the harness's code
  there): every stream of the device synchronised before the call, CUDA
  events around it, and the device synchronised again before the end event
  is recorded, so work the call put on a side stream is inside the span.

What the learner's process says is never believed alone: it shares that
process with the learner's code, which may patch torch. The speed phase
charges a GPU call the larger of its wall time taken outside (from sending
the call until the reply, whose tensors were copied to host memory, came
back) and the events' span (``speed.Sample.charged``): a forged span or a
skipped synchronisation can only make a call dearer, and work a side stream
had not finished is missing from the copied output, which the phase then
refuses as a wrong output.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

# Written between calls when the device does not say how large its L2 is.
L2_FALLBACK_BYTES = 256 * 2**20
# The device's name and driver as a result carries them (``sandbox.report`` caps them again).
MAX_LABEL = 80
NVIDIA_VERSION_FILE = "/proc/driver/nvidia/version"
# Present wherever a container was given an NVIDIA GPU.
NVIDIA_NODES = ("/dev/nvidiactl", "/dev/nvidia0", NVIDIA_VERSION_FILE)


def l2_flush_bytes(l2_cache_size: Any) -> int:
    """How many bytes to write so nothing of the last call stays in L2: twice its size, else ``L2_FALLBACK_BYTES``."""
    if type(l2_cache_size) is int and l2_cache_size > 0:
        return 2 * l2_cache_size
    return L2_FALLBACK_BYTES


def label_text(value: Any, limit: int = MAX_LABEL) -> str:
    """``value`` as one short printable line (a device's name, a driver's version)."""
    text = "".join(char if char.isprintable() else " " for char in str(value)[: limit * 4])
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def driver_version(version_file_text: str | None, cuda_driver: int | None) -> str:
    """The NVIDIA driver's release (e.g. "550.54.15") from ``/proc/driver/nvidia/version``,
    else the CUDA driver API version torch reports (e.g. 12040 as "CUDA driver 12.4"), else ""."""
    if version_file_text:
        words = version_file_text.split()
        for index, word in enumerate(words):
            if word == "Module" and index + 1 < len(words) and words[index + 1][:1].isdigit():
                return label_text(words[index + 1])
    if type(cuda_driver) is int and cuda_driver > 0:
        return f"CUDA driver {cuda_driver // 1000}.{cuda_driver % 1000 // 10}"
    return ""


def _cuda_driver_api() -> int | None:
    import torch

    ask = getattr(torch._C, "_cuda_getDriverVersion", None)
    try:
        return int(ask()) if ask is not None else None
    except (RuntimeError, TypeError, ValueError):
        return None


def device_facts() -> dict[str, str] | None:
    """The GPU this container sees (``device``, ``driver``), or None: no torch, no CUDA, no device.
    Without an NVIDIA device node it asks nothing (torch is not imported for a CPU job that had no need of it)."""
    if not any(os.path.exists(path) for path in NVIDIA_NODES):
        return None
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        name = torch.cuda.get_device_name(0)
    except Exception:  # noqa: BLE001 - any failure to ask is no GPU to time on
        return None
    try:
        with open(NVIDIA_VERSION_FILE) as handle:
            version_text: str | None = handle.read(4096)
    except OSError:
        version_text = None
    return {"device": label_text(name), "driver": driver_version(version_text, _cuda_driver_api())}


class L2Flusher:
    """A buffer on the GPU larger than its L2, written and waited for before each timed call."""

    def __init__(self) -> None:
        import torch

        size = l2_flush_bytes(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", None))
        self._torch = torch
        self._buffer = torch.empty(size, dtype=torch.uint8, device="cuda")
        self._value = 0

    def flush(self) -> None:
        # A new value each time: a write of what is already there is still a write, but leave nothing to chance.
        self._value = (self._value + 1) % 251
        self._buffer.fill_(self._value)
        self._torch.cuda.synchronize()


def call_on_device(function: Callable[..., Any], args: Any, kwargs: Any) -> tuple[Any, float | None]:
    """Call ``function`` in the learner's process, the device synchronised around it, timed by CUDA events.

    Returns its value and the events' span in seconds; None when this process
    has not used CUDA (the call ran on the CPU: nothing to synchronise before
    it, though what it started on the GPU is waited for after).
    """
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        value = function(*args, **kwargs)
        if torch is not None and torch.cuda.is_initialized():
            torch.cuda.synchronize()
        return value, None
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    value = function(*args, **kwargs)
    # Every stream of the device, a side stream's included, before the end is marked.
    torch.cuda.synchronize()
    end.record()
    end.synchronize()
    return value, start.elapsed_time(end) / 1000.0
