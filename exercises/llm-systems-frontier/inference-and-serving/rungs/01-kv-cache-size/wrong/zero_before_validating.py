"""Wrong solution: max_sequences answers 0 as soon as the weights fill the card, before checking the rest."""

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
    kv_heads = config.get("num_key_value_heads")
    kv_heads = heads if kv_heads is None else _positive_int(kv_heads, "num_key_value_heads")
    if heads % kv_heads != 0:
        raise ValueError("num_key_value_heads must divide num_attention_heads")
    head_dim = config.get("head_dim")
    if head_dim is None:
        if config.get("hidden_size") is None:
            raise ValueError("no head_dim and no hidden_size")
        hidden = _positive_int(config["hidden_size"], "hidden_size")
        if hidden % heads != 0:
            raise ValueError("hidden_size is not divisible by num_attention_heads")
        head_dim = hidden // heads
    head_dim = _positive_int(head_dim, "head_dim")
    seq_len = _positive_int(seq_len, "seq_len")
    batch_size = _positive_int(batch_size, "batch_size")
    elements = 2 * layers * kv_heads * seq_len * head_dim * batch_size
    return elements * BITS_PER_ELEMENT[dtype] // 8


def max_sequences(gpu_bytes: int, weight_bytes: int, config: dict, seq_len: int, dtype: str = "fp16") -> int:
    gpu_bytes = _positive_int(gpu_bytes, "gpu_bytes")
    if isinstance(weight_bytes, bool) or not isinstance(weight_bytes, int) or weight_bytes < 0:
        raise ValueError(f"weight_bytes must be a non-negative int, got {weight_bytes!r}")
    free = gpu_bytes - weight_bytes
    if free <= 0:
        return 0  # no room: nothing else matters
    return free // kv_cache_bytes(config, seq_len, 1, dtype)
