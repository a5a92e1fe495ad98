"""Wrong solution: multiplies by the starter's float table, so int4 sizes come back as floats."""

from __future__ import annotations

BYTES_PER_ELEMENT = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1, "int4": 0.5}


def _check(value, name, allow_zero=False):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"bad {name}: {value!r}")
    return value


def _shape(config):
    layers = _check(config["num_hidden_layers"], "num_hidden_layers")
    heads = _check(config["num_attention_heads"], "num_attention_heads")
    kv = config.get("num_key_value_heads")
    kv = heads if kv is None else _check(kv, "num_key_value_heads")
    if heads % kv:
        raise ValueError("num_key_value_heads must divide num_attention_heads")
    head_dim = config.get("head_dim")
    if head_dim is None:
        hidden = config.get("hidden_size")
        if hidden is None:
            raise ValueError("need head_dim or hidden_size")
        hidden = _check(hidden, "hidden_size")
        if hidden % heads:
            raise ValueError("hidden_size must split evenly across the heads")
        head_dim = hidden // heads
    return layers, kv, _check(head_dim, "head_dim")


def kv_cache_bytes(config: dict, seq_len: int, batch_size: int = 1, dtype: str = "fp16") -> int:
    if dtype not in BYTES_PER_ELEMENT:
        raise ValueError(f"unknown dtype {dtype!r}")
    layers, kv, head_dim = _shape(config)
    seq_len = _check(seq_len, "seq_len")
    batch_size = _check(batch_size, "batch_size")
    return 2 * layers * kv * seq_len * head_dim * batch_size * BYTES_PER_ELEMENT[dtype]


def max_sequences(gpu_bytes: int, weight_bytes: int, config: dict, seq_len: int, dtype: str = "fp16") -> int:
    gpu_bytes = _check(gpu_bytes, "gpu_bytes")
    weight_bytes = _check(weight_bytes, "weight_bytes", allow_zero=True)
    per_sequence = kv_cache_bytes(config, seq_len, 1, dtype)
    free = gpu_bytes - weight_bytes
    if free <= 0:
        return 0
    return free // per_sequence
