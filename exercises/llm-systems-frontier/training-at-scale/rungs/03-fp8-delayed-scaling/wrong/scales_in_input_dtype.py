"""FP8 with delayed scaling."""

from __future__ import annotations

import torch

FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}
FP8_DTYPE = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
INPUT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


class DelayedScaling:
    def __init__(self, fmt: str = "e4m3", history_len: int = 16, margin: int = 0) -> None:
        if type(fmt) is not str or fmt not in FP8_MAX:
            raise ValueError(f"fmt must be 'e4m3' or 'e5m2', got {fmt!r}")
        if type(history_len) is not int or history_len <= 0:
            raise ValueError(f"history_len must be a positive int, got {history_len!r}")
        if type(margin) is not int or margin < 0:
            raise ValueError(f"margin must be an int >= 0, got {margin!r}")
        self.fmt = fmt
        self.fp8_max = FP8_MAX[fmt]
        self.fp8_dtype = FP8_DTYPE[fmt]
        self.history_len = history_len
        self.margin = margin
        self._history: list[float] = []
        self.last_saturated = 0

    @property
    def amax_history(self) -> list[float]:
        """amax of the last history_len tensors, oldest first (a new list)."""
        return list(self._history)

    @property
    def scale(self) -> float:
        """fp8_max / max(history) / 2**margin, or 1.0 when the history is empty or all zero."""
        if not self._history:
            return 1.0
        amax = max(self._history)
        if amax == 0:
            return 1.0
        return self.fp8_max / amax / 2**self.margin

    def quantize(self, x: torch.Tensor) -> torch.Tensor:
        """Quantize x to FP8 with the current scale and return it dequantized as float32."""
        if not isinstance(x, torch.Tensor) or x.dtype not in INPUT_DTYPES:
            raise ValueError("x must be a float16, bfloat16, float32 or float64 tensor")
        if not bool(torch.isfinite(x).all()):
            raise ValueError("x holds a NaN or an infinity")
        v = x.to(torch.float32).clone()
        s = self.scale
        scaled = (x * s).to(torch.float32)
        self.last_saturated = int((scaled.abs() > self.fp8_max).sum().item())
        q = scaled.clamp(-self.fp8_max, self.fp8_max).to(self.fp8_dtype)
        out = q.to(torch.float32) / s
        amax = float(v.abs().max().item()) if v.numel() > 0 else 0.0
        self._history.append(amax)
        if len(self._history) > self.history_len:
            self._history.pop(0)
        return out
