"""Memory per GPU for training."""

from __future__ import annotations


def _positive_int(value, name):
    if type(value) is not int or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def model_state_bytes(num_params: int, n_gpus: int, stage: int, optimizer_bytes: int = 12) -> int:
    _positive_int(num_params, "num_params")
    _positive_int(n_gpus, "n_gpus")
    if type(stage) is not int or stage not in (0, 1, 2, 3):
        raise ValueError(f"stage must be 0, 1, 2 or 3, got {stage!r}")
    if type(optimizer_bytes) is not int or optimizer_bytes < 0:
        raise ValueError(f"optimizer_bytes must be a non-negative int, got {optimizer_bytes!r}")
    P, N, K = num_params, n_gpus, optimizer_bytes

    def split(total):
        return -(-total // N)

    if stage == 0:
        return (4 + K) * P
    if stage == 1:
        return 4 * P + split(K * P)
    if stage == 2:
        return 2 * P + split((2 + K) * P)
    return split((4 + K) * P)


def activation_bytes(num_layers: int, seq_len: int, micro_batch: int, hidden_size: int, num_heads: int, recompute: bool = False) -> int:
    for name, value in (("num_layers", num_layers), ("seq_len", seq_len), ("micro_batch", micro_batch),
                        ("hidden_size", hidden_size), ("num_heads", num_heads)):
        _positive_int(value, name)
    if type(recompute) is not bool:
        raise ValueError(f"recompute must be True or False, got {recompute!r}")
    if hidden_size % num_heads != 0:
        raise ValueError("hidden_size must be divisible by num_heads")
    s, b, h, a = seq_len, micro_batch, hidden_size, num_heads
    if recompute:
        per_layer = 2 * s * b * h
    else:
        per_layer = s * b * h * (34 + 5 * a * s // h)
    return num_layers * per_layer
