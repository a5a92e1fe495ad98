"""Wrong solution: accepts dtype names in any case and whole-looking floats as sizes."""

from __future__ import annotations

BITS_PER_ELEMENT = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4}


def _size(value: object, name: str) -> int:
    if value is None or value <= 0 or int(value) != value:
        raise ValueError(f"{name} must be a positive whole number, got {value!r}")
    return int(value)


def kv_cache_bytes(config: dict, seq_len: int, batch_size: int = 1, dtype: str = "fp16") -> int:
    dtype = dtype.strip().lower()
    if dtype not in BITS_PER_ELEMENT:
        raise ValueError(f"unknown dtype {dtype!r}")
    layers = _size(config["num_hidden_layers"], "num_hidden_layers")
    heads = _size(config["num_attention_heads"], "num_attention_heads")
    kv_heads = config.get("num_key_value_heads")
    kv_heads = heads if kv_heads is None else _size(kv_heads, "num_key_value_heads")
    if heads % kv_heads != 0:
        raise ValueError("num_key_value_heads must divide num_attention_heads")
    head_dim = config.get("head_dim")
    if head_dim is None:
        if config.get("hidden_size") is None:
            raise ValueError("no head_dim and no hidden_size")
        hidden = _size(config["hidden_size"], "hidden_size")
        if hidden % heads != 0:
            raise ValueError("hidden_size is not divisible by num_attention_heads")
        head_dim = hidden // heads
    head_dim = _size(head_dim, "head_dim")
    elements = 2 * layers * kv_heads * _size(seq_len, "seq_len") * head_dim * _size(batch_size, "batch_size")
    return elements * BITS_PER_ELEMENT[dtype] // 8


def max_sequences(gpu_bytes: int, weight_bytes: int, config: dict, seq_len: int, dtype: str = "fp16") -> int:
    gpu_bytes = _size(gpu_bytes, "gpu_bytes")
    if weight_bytes < 0:
        raise ValueError("weight_bytes must not be negative")
    per_sequence = kv_cache_bytes(config, seq_len, 1, dtype)
    return max(0, (gpu_bytes - int(weight_bytes)) // per_sequence)
