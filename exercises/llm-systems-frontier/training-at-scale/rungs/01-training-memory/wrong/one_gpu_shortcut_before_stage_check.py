"""Wrong solution: returns (4 + K) * P for a single GPU before checking the stage and K."""
from __future__ import annotations


def _pos(v, name):
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ValueError(f"{name} must be a positive int")


def model_state_bytes(num_params: int, n_gpus: int, stage: int, optimizer_bytes: int = 12) -> int:
    _pos(num_params, "num_params")
    _pos(n_gpus, "n_gpus")
    if n_gpus == 1 and not isinstance(optimizer_bytes, bool) and isinstance(optimizer_bytes, int):
        return (4 + optimizer_bytes) * num_params
    if isinstance(stage, bool) or not isinstance(stage, int) or stage not in (0, 1, 2, 3):
        raise ValueError("stage")
    if isinstance(optimizer_bytes, bool) or not isinstance(optimizer_bytes, int) or optimizer_bytes < 0:
        raise ValueError("optimizer_bytes")
    P, N, K = num_params, n_gpus, optimizer_bytes
    if stage == 0:
        return (4 + K) * P
    if stage == 1:
        return 4 * P + -(-(K * P) // N)
    if stage == 2:
        return 2 * P + -(-((2 + K) * P) // N)
    return -(-((4 + K) * P) // N)


def activation_bytes(num_layers: int, seq_len: int, micro_batch: int, hidden_size: int, num_heads: int, recompute: bool = False) -> int:
    for v, n in ((num_layers, "num_layers"), (seq_len, "seq_len"), (micro_batch, "micro_batch"),
                 (hidden_size, "hidden_size"), (num_heads, "num_heads")):
        _pos(v, n)
    if recompute is not True and recompute is not False:
        raise ValueError("recompute")
    if hidden_size % num_heads != 0:
        raise ValueError("hidden_size % num_heads")
    s, b, h, a = seq_len, micro_batch, hidden_size, num_heads
    if recompute:
        per = 2 * s * b * h
    else:
        per = 34 * s * b * h + 5 * a * s * s * b
    return num_layers * per
