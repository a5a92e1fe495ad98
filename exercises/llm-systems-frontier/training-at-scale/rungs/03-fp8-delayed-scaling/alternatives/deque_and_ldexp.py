"""FP8 delayed scaling: the history in a bounded deque, the margin applied with math.ldexp (exact for a power of two)."""

import math
from collections import deque

import torch

FORMATS = {"e4m3": (448.0, torch.float8_e4m3fn), "e5m2": (57344.0, torch.float8_e5m2)}
ACCEPTED = {torch.float16, torch.bfloat16, torch.float32, torch.float64}


class DelayedScaling:
    def __init__(self, fmt="e4m3", history_len=16, margin=0):
        if not isinstance(fmt, str) or fmt not in FORMATS:
            raise ValueError(f"unknown FP8 format {fmt!r}")
        for name, value, low in (("history_len", history_len, 1), ("margin", margin, 0)):
            if type(value) is not int or value < low:
                raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
        self._fp8_max, self._dtype = FORMATS[fmt]
        self._margin = margin
        self._history = deque(maxlen=history_len)
        self.last_saturated = 0

    @property
    def amax_history(self):
        return [float(value) for value in self._history]

    @property
    def scale(self):
        largest = 0.0
        for value in self._history:
            if value > largest:
                largest = value
        if largest == 0.0:
            return 1.0
        # Dividing by 2**margin and ldexp(.., -margin) give the same float: a power of two only moves the exponent.
        return math.ldexp(self._fp8_max / largest, -self._margin)

    def quantize(self, x):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"x must be a torch.Tensor, got {type(x).__name__}")
        if x.dtype not in ACCEPTED:
            raise ValueError(f"x must be float16, bfloat16, float32 or float64, got {x.dtype}")
        v = x.detach().clone().to(torch.float32)
        if v.isnan().any() or v.isinf().any():
            raise ValueError("x holds NaN or an infinity once in float32")
        s = self.scale
        scaled = v * s
        over = torch.logical_or(scaled > self._fp8_max, scaled < -self._fp8_max)
        self.last_saturated = int(over.sum().item())
        fp8 = torch.clamp(scaled, min=-self._fp8_max, max=self._fp8_max).to(self._dtype)
        result = fp8.to(torch.float32) / s
        self._history.append(torch.amax(v.abs()).item() if v.numel() > 0 else 0.0)
        return result
