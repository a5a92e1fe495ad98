"""Wrong solution: falls back to other libraries' key names (num_kv_heads, n_kv_heads) when num_key_value_heads is absent."""
from __future__ import annotations

BITS_PER_ELEMENT = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4}


def _pos_int(v, name):
    if type(v) is bool or not isinstance(v, int) or v <= 0:
        raise ValueError(f"{name} must be a positive int, got {v!r}")
    return v


def _check_dtype(dtype):
    if not isinstance(dtype, str) or dtype not in BITS_PER_ELEMENT:
        raise ValueError(f"unknown dtype {dtype!r}")
    return BITS_PER_ELEMENT[dtype]


def _shape(config):
    if not isinstance(config, dict):
        raise ValueError("config must be a dict")
    layers = _pos_int(config.get("num_hidden_layers"), "num_hidden_layers")
    heads = _pos_int(config.get("num_attention_heads"), "num_attention_heads")
    kv = config.get("num_key_value_heads")
    if kv is None:
        kv = config.get("num_kv_heads", config.get("n_kv_heads"))
    if kv is None:
        kv = heads
    _pos_int(kv, "num_key_value_heads")
    if heads % kv != 0:
        raise ValueError("num_key_value_heads must divide num_attention_heads")
    hd = config.get("head_dim")
    if hd is None:
        hidden = config.get("hidden_size")
        if hidden is None:
            raise ValueError("need head_dim or hidden_size")
        _pos_int(hidden, "hidden_size")
        if hidden % heads != 0:
            raise ValueError("hidden_size not divisible by heads")
        hd = hidden // heads
    else:
        _pos_int(hd, "head_dim")
    return layers, kv, hd


def _bytes(shape, seq_len, batch_size, bits):
    layers, kv, hd = shape
    elements = 2 * layers * kv * seq_len * hd * batch_size
    return elements * bits // 8


def kv_cache_bytes(config: dict, seq_len: int, batch_size: int = 1, dtype: str = "fp16") -> int:
    shape = _shape(config)
    _pos_int(seq_len, "seq_len")
    _pos_int(batch_size, "batch_size")
    bits = _check_dtype(dtype)
    return _bytes(shape, seq_len, batch_size, bits)


def max_sequences(gpu_bytes: int, weight_bytes: int, config: dict, seq_len: int, dtype: str = "fp16") -> int:
    _pos_int(gpu_bytes, "gpu_bytes")
    if type(weight_bytes) is bool or not isinstance(weight_bytes, int) or weight_bytes < 0:
        raise ValueError("weight_bytes must be a non-negative int")
    shape = _shape(config)
    _pos_int(seq_len, "seq_len")
    bits = _check_dtype(dtype)
    per = _bytes(shape, seq_len, 1, bits)
    free = gpu_bytes - weight_bytes
    if free <= 0:
        return 0
    return free // per
