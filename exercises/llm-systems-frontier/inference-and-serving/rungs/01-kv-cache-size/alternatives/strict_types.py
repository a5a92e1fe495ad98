"""Correct, written from the instructions alone: exact type checks
(``type(x) is int``), the config checked to be a dict first, and the
bytes worked out in half-bytes (nibbles) with one final integer division."""

from __future__ import annotations

NIBBLES = {"fp32": 8, "fp16": 4, "bf16": 4, "fp8": 2, "int8": 2, "int4": 1}


def _positive(value: object) -> int:
    if type(value) is not int or value <= 0:
        raise ValueError(f"expected a positive int, got {value!r}")
    return value


def _nibbles(dtype: object) -> int:
    if type(dtype) is not str or dtype not in NIBBLES:
        raise ValueError(f"unknown dtype {dtype!r}")
    return NIBBLES[dtype]


def _elements_per_token(config: object) -> int:
    if not isinstance(config, dict):
        raise ValueError("config must be a dict")
    if "num_hidden_layers" not in config or "num_attention_heads" not in config:
        raise ValueError("config lacks a required key")
    layers = _positive(config["num_hidden_layers"])
    heads = _positive(config["num_attention_heads"])
    kv_heads = config.get("num_key_value_heads")
    kv_heads = heads if kv_heads is None else _positive(kv_heads)
    if heads % kv_heads != 0:
        raise ValueError("num_key_value_heads must divide num_attention_heads")
    head_dim = config.get("head_dim")
    if head_dim is None:
        hidden = config.get("hidden_size")
        if hidden is None:
            raise ValueError("neither head_dim nor hidden_size")
        hidden = _positive(hidden)
        if hidden % heads != 0:
            raise ValueError("hidden_size does not split across the heads")
        head_dim = hidden // heads
    else:
        head_dim = _positive(head_dim)
    return 2 * layers * kv_heads * head_dim


def kv_cache_bytes(config: dict, seq_len: int, batch_size: int = 1, dtype: str = "fp16") -> int:
    nibbles = _nibbles(dtype)
    _positive(batch_size)
    _positive(seq_len)
    per_token = _elements_per_token(config)
    return per_token * seq_len * batch_size * nibbles // 2


def max_sequences(gpu_bytes: int, weight_bytes: int, config: dict, seq_len: int, dtype: str = "fp16") -> int:
    nibbles = _nibbles(dtype)
    per_token = _elements_per_token(config)
    _positive(seq_len)
    _positive(gpu_bytes)
    if type(weight_bytes) is not int or weight_bytes < 0:
        raise ValueError("weight_bytes must be a non-negative int")
    per_sequence = per_token * seq_len * nibbles // 2
    if weight_bytes >= gpu_bytes:
        return 0
    return (gpu_bytes - weight_bytes) // per_sequence
