"""Size the KV cache."""

from __future__ import annotations

BITS_PER_ELEMENT = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4}


def _positive_int(value, name):
    if type(value) is not int or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def _check_dtype(dtype):
    if type(dtype) is not str or dtype not in BITS_PER_ELEMENT:
        raise ValueError(f"unknown dtype {dtype!r}")


def _per_token_elements(config):
    """Elements of K and V per token (all layers), after validating the config."""
    if not isinstance(config, dict):
        raise ValueError("config must be a dict")
    layers = config["num_hidden_layers"]
    heads = config["num_attention_heads"]
    _positive_int(layers, "num_hidden_layers")
    _positive_int(heads, "num_attention_heads")
    kv = config.get("num_key_value_heads")
    if kv is None:
        kv = heads
    _positive_int(kv, "num_key_value_heads")
    if heads % kv != 0:
        raise ValueError("num_key_value_heads must divide num_attention_heads")
    head_dim = config.get("head_dim")
    if head_dim is None:
        hidden = config.get("hidden_size")
        if hidden is None:
            raise ValueError("need head_dim or hidden_size")
        _positive_int(hidden, "hidden_size")
        if hidden % heads != 0:
            raise ValueError("hidden_size must be divisible by num_attention_heads")
        head_dim = hidden // heads
    _positive_int(head_dim, "head_dim")
    return 2 * layers * kv * head_dim


def kv_cache_bytes(config: dict, seq_len: int, batch_size: int = 1, dtype: str = "fp16") -> int:
    per_token = _per_token_elements(config)
    _positive_int(seq_len, "seq_len")
    _positive_int(batch_size, "batch_size")
    _check_dtype(dtype)
    return per_token * seq_len * batch_size * BITS_PER_ELEMENT[dtype] // 8


def max_sequences(gpu_bytes: int, weight_bytes: int, config: dict, seq_len: int, dtype: str = "fp16") -> int:
    _positive_int(gpu_bytes, "gpu_bytes")
    if type(weight_bytes) is not int or weight_bytes <= 0:
        raise ValueError(f"weight_bytes must be an int >= 0, got {weight_bytes!r}")
    per_seq = kv_cache_bytes(config, seq_len, 1, dtype)
    free = gpu_bytes - weight_bytes
    if free <= 0:
        return 0
    return free // per_seq
