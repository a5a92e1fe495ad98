"""Memory per GPU for training: the table's four closed forms, rounding up by floor division of the negation."""

import numbers


def _check_count(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or isinstance(value, float):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value!r}")


def _ceil_div(a, b):
    return -(-a // b)


def model_state_bytes(num_params: int, n_gpus: int, stage: int, optimizer_bytes: int = 12) -> int:
    _check_count(num_params, "num_params")
    _check_count(n_gpus, "n_gpus")
    if isinstance(stage, bool) or not isinstance(stage, int) or not 0 <= stage <= 3:
        raise ValueError(f"bad stage {stage!r}")
    if isinstance(optimizer_bytes, bool) or not isinstance(optimizer_bytes, int) or optimizer_bytes < 0:
        raise ValueError(f"bad optimizer_bytes {optimizer_bytes!r}")
    p, n, k = num_params, n_gpus, optimizer_bytes
    if stage == 0:
        return (4 + k) * p
    if stage == 1:
        return 4 * p + _ceil_div(k * p, n)
    if stage == 2:
        return 2 * p + _ceil_div((2 + k) * p, n)
    return _ceil_div((4 + k) * p, n)


def activation_bytes(num_layers: int, seq_len: int, micro_batch: int, hidden_size: int, num_heads: int, recompute: bool = False) -> int:
    for value, name in ((num_layers, "num_layers"), (seq_len, "seq_len"), (micro_batch, "micro_batch"), (hidden_size, "hidden_size"), (num_heads, "num_heads")):
        _check_count(value, name)
    if type(recompute) is not bool:
        raise ValueError(f"recompute must be a bool, got {recompute!r}")
    if hidden_size % num_heads != 0:
        raise ValueError("hidden_size must be divisible by num_heads")
    s, b, h, a = seq_len, micro_batch, hidden_size, num_heads
    per_layer = 2 * s * b * h if recompute else 34 * s * b * h + 5 * a * s * s * b
    return per_layer * num_layers
