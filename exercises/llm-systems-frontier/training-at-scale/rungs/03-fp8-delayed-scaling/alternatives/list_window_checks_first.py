"""FP8 delayed scaling: a plain list trimmed from the front, every argument checked by one helper, amax via max over the flattened values."""

import torch

LIMITS = {"e4m3": 448.0, "e5m2": 57344.0}
DTYPES = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}


def _int_at_least(value, low, name):
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int of at least {low}, got {value!r}")


class DelayedScaling:
    def __init__(self, fmt: str = "e4m3", history_len: int = 16, margin: int = 0) -> None:
        # margin and history_len before fmt: independent checks, any order will do.
        _int_at_least(margin, 0, "margin")
        _int_at_least(history_len, 1, "history_len")
        if type(fmt) is not str or fmt not in LIMITS:
            raise ValueError(f"fmt must be 'e4m3' or 'e5m2', got {fmt!r}")
        self._fmt = fmt
        self._keep = history_len
        self._margin = margin
        self._amaxes: list[float] = []
        self.last_saturated = 0

    @property
    def amax_history(self) -> list[float]:
        return self._amaxes[:]

    @property
    def scale(self) -> float:
        if not self._amaxes or max(self._amaxes) == 0.0:
            return 1.0
        return LIMITS[self._fmt] / max(self._amaxes) / 2**self._margin

    def quantize(self, x: torch.Tensor) -> torch.Tensor:
        ok = isinstance(x, torch.Tensor) and x.dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64)
        if not ok:
            raise ValueError("x must be a float16, bfloat16, float32 or float64 tensor")
        v = x.to(torch.float32, copy=True)
        if not torch.isfinite(v).all().item():
            raise ValueError("x is not finite in float32")
        limit = LIMITS[self._fmt]
        s = self.scale
        scaled = v * s
        saturated = int(torch.count_nonzero(scaled.abs() > limit))
        q = torch.where(scaled > limit, limit, torch.where(scaled < -limit, -limit, scaled)).to(DTYPES[self._fmt])
        out = q.float() / s
        amax = max((abs(value) for value in v.flatten().tolist()), default=0.0)
        self.last_saturated = saturated
        self._amaxes.append(float(amax))
        if len(self._amaxes) > self._keep:
            del self._amaxes[0]
        return out
