"""Wrong solution: never drops old amax values from the history."""

from __future__ import annotations

import torch

FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}
FP8_DTYPE = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
INPUT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


class DelayedScaling:
    """Fake-quantizes tensors to FP8 with a scale taken from the amax of earlier tensors."""

    def __init__(self, fmt: str = "e4m3", history_len: int = 16, margin: int = 0) -> None:
        if fmt not in FP8_MAX:
            raise ValueError(f"fmt must be 'e4m3' or 'e5m2', got {fmt!r}")
        if isinstance(history_len, bool) or not isinstance(history_len, int) or history_len <= 0:
            raise ValueError(f"history_len must be a positive int, got {history_len!r}")
        if isinstance(margin, bool) or not isinstance(margin, int) or margin < 0:
            raise ValueError(f"margin must be an int >= 0, got {margin!r}")
        self.fmt = fmt
        self.history_len = history_len
        self.margin = margin
        self._history: list[float] = []
        self.last_saturated = 0

    @property
    def amax_history(self) -> list[float]:
        return list(self._history)

    @property
    def scale(self) -> float:
        """The scale the next tensor will be quantized with."""
        amax = max(self._history, default=0.0)
        if amax == 0.0:
            return 1.0
        return FP8_MAX[self.fmt] / amax / 2**self.margin

    def quantize(self, x: torch.Tensor) -> torch.Tensor:
        """Quantize `x` with the current scale, return it dequantized (float32), then record its amax."""
        if not isinstance(x, torch.Tensor) or x.dtype not in INPUT_DTYPES:
            raise ValueError("x must be a float16, bfloat16, float32 or float64 tensor")
        values = x.detach().to(torch.float32)
        if not bool(torch.isfinite(values).all()):
            raise ValueError("x holds NaN or infinite values")
        fp8_max = FP8_MAX[self.fmt]
        scale = self.scale
        scaled = values * scale
        self.last_saturated = int((scaled.abs() > fp8_max).sum())
        q = scaled.clamp(-fp8_max, fp8_max).to(FP8_DTYPE[self.fmt])
        out = q.to(torch.float32) / scale
        amax = float(values.abs().max()) if values.numel() else 0.0
        self._history = self._history + [amax]
        return out
