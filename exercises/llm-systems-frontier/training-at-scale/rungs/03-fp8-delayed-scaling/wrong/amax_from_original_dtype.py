"""Wrong solution: takes the amax from a float64 input as given instead of from its float32 copy."""
from __future__ import annotations

import torch

FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}
FP8_DTYPE = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
_IN_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class DelayedScaling:
    def __init__(self, fmt: str = "e4m3", history_len: int = 16, margin: int = 0) -> None:
        if not isinstance(fmt, str) or fmt not in FP8_MAX:
            raise ValueError("fmt")
        if not _is_int(history_len) or history_len <= 0:
            raise ValueError("history_len")
        if not _is_int(margin) or margin < 0:
            raise ValueError("margin")
        self._fmt = fmt
        self._max = FP8_MAX[fmt]
        self._dtype = FP8_DTYPE[fmt]
        self._len = history_len
        self._margin = margin
        self._hist: list[float] = []
        self.last_saturated = 0

    @property
    def amax_history(self) -> list[float]:
        return list(self._hist)

    @property
    def scale(self) -> float:
        if not self._hist:
            return 1.0
        m = max(self._hist)
        if m == 0:
            return 1.0
        return self._max / m / 2 ** self._margin

    def quantize(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor) or x.dtype not in _IN_DTYPES:
            raise ValueError("x must be a float tensor")
        v = x.to(torch.float32, copy=True)
        if v.numel() and not bool(torch.isfinite(v).all()):
            raise ValueError("x holds NaN or inf")
        s = self.scale
        scaled = v * s
        self.last_saturated = int((scaled.abs() > self._max).sum().item())
        q = scaled.clamp(-self._max, self._max).to(self._dtype)
        out = q.to(torch.float32) / s
        amax = float(x.abs().max().item()) if v.numel() else 0.0
        self._hist.append(amax)
        if len(self._hist) > self._len:
            self._hist.pop(0)
        return out
