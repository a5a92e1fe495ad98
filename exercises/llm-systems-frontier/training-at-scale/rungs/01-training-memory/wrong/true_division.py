"""Wrong solution: divides with /, so results are floats and huge counts lose bytes."""

from __future__ import annotations

WEIGHT_BYTES = 2  # fp16/bf16 weights
GRADIENT_BYTES = 2  # fp16/bf16 gradients


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def model_state_bytes(num_params: int, n_gpus: int, stage: int, optimizer_bytes: int = 12) -> int:
    """Bytes of weights, gradients and optimizer states held by one GPU."""
    num_params = _positive_int(num_params, "num_params")
    n_gpus = _positive_int(n_gpus, "n_gpus")
    if isinstance(stage, bool) or not isinstance(stage, int) or stage not in (0, 1, 2, 3):
        raise ValueError(f"stage must be 0, 1, 2 or 3, got {stage!r}")
    if isinstance(optimizer_bytes, bool) or not isinstance(optimizer_bytes, int) or optimizer_bytes < 0:
        raise ValueError(f"optimizer_bytes must be a non-negative int, got {optimizer_bytes!r}")
    # Bytes per parameter: (kept whole, split n_gpus ways).
    whole, split = {
        0: (WEIGHT_BYTES + GRADIENT_BYTES + optimizer_bytes, 0),
        1: (WEIGHT_BYTES + GRADIENT_BYTES, optimizer_bytes),
        2: (WEIGHT_BYTES, GRADIENT_BYTES + optimizer_bytes),
        3: (0, WEIGHT_BYTES + GRADIENT_BYTES + optimizer_bytes),
    }[stage]
    shard = split * num_params / n_gpus
    return whole * num_params + shard


def activation_bytes(num_layers: int, seq_len: int, micro_batch: int, hidden_size: int, num_heads: int, recompute: bool = False) -> int:
    """Bytes of activations one GPU keeps for the backward pass (16-bit, no model parallelism)."""
    num_layers = _positive_int(num_layers, "num_layers")
    seq_len = _positive_int(seq_len, "seq_len")
    micro_batch = _positive_int(micro_batch, "micro_batch")
    hidden_size = _positive_int(hidden_size, "hidden_size")
    num_heads = _positive_int(num_heads, "num_heads")
    if not isinstance(recompute, bool):
        raise ValueError(f"recompute must be True or False, got {recompute!r}")
    if hidden_size % num_heads != 0:
        raise ValueError(f"hidden_size={hidden_size} is not divisible by num_heads={num_heads}")
    tokens = seq_len * micro_batch
    if recompute:
        per_layer = 2 * tokens * hidden_size  # only the layer's input is kept
    else:
        # s*b*h*(34 + 5*a*s/h) = 34*s*b*h + 5*a*s*s*b: an exact integer.
        per_layer = 34 * tokens * hidden_size + 5 * num_heads * seq_len * tokens
    return num_layers * per_layer
