"""Wrong solution: reads hidden_size without checking it is there (KeyError), and reads it even when head_dim is given."""

from __future__ import annotations

BITS_PER_ELEMENT = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4}


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def kv_cache_bytes(config: dict, seq_len: int, batch_size: int = 1, dtype: str = "fp16") -> int:
    if dtype not in BITS_PER_ELEMENT:
        raise ValueError(f"unknown dtype {dtype!r}")
    layers = _positive_int(config["num_hidden_layers"], "num_hidden_layers")
    heads = _positive_int(config["num_attention_heads"], "num_attention_heads")
    hidden = config["hidden_size"]
    kv_heads = config.get("num_key_value_heads") or heads
    kv_heads = _positive_int(kv_heads, "num_key_value_heads")
    if heads % kv_heads != 0:
        raise ValueError("num_key_value_heads must divide num_attention_heads")
    head_dim = config.get("head_dim")
    if head_dim is None:
        hidden = _positive_int(hidden, "hidden_size")
        if hidden % heads != 0:
            raise ValueError("hidden_size is not divisible by num_attention_heads")
        head_dim = hidden // heads
    head_dim = _positive_int(head_dim, "head_dim")
    elements = 2 * layers * kv_heads * _positive_int(seq_len, "seq_len") * head_dim * _positive_int(batch_size, "batch_size")
    return elements * BITS_PER_ELEMENT[dtype] // 8


def max_sequences(gpu_bytes: int, weight_bytes: int, config: dict, seq_len: int, dtype: str = "fp16") -> int:
    gpu_bytes = _positive_int(gpu_bytes, "gpu_bytes")
    if isinstance(weight_bytes, bool) or not isinstance(weight_bytes, int) or weight_bytes < 0:
        raise ValueError(f"weight_bytes must be a non-negative int, got {weight_bytes!r}")
    per_sequence = kv_cache_bytes(config, seq_len, 1, dtype)
    return max(0, (gpu_bytes - weight_bytes) // per_sequence)
