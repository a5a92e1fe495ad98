"""Correct, written from the instructions alone: isinstance checks that
refuse bools, the size counted in bits, and max_sequences by divmod on the
free bytes (negative free memory clamped to zero)."""

from __future__ import annotations

BITS = (("fp32", 32), ("fp16", 16), ("bf16", 16), ("fp8", 8), ("int8", 8), ("int4", 4))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _bits(dtype: object) -> int:
    if isinstance(dtype, str):
        for name, bits in BITS:
            if dtype == name:
                return bits
    raise ValueError(f"dtype must be one of {[name for name, _ in BITS]}")


def _check_positive(*values: object) -> None:
    for value in values:
        if not _is_int(value) or value < 1:  # type: ignore[operator]
            raise ValueError(f"sizes must be positive ints, got {value!r}")


def _head_dim(config: dict, heads: int) -> int:
    if config.get("head_dim") is not None:
        _check_positive(config["head_dim"])
        return config["head_dim"]
    hidden = config.get("hidden_size")
    if hidden is None:
        raise ValueError("no head_dim and no hidden_size")
    _check_positive(hidden)
    quotient, remainder = divmod(hidden, heads)
    if remainder:
        raise ValueError("hidden_size is not a multiple of num_attention_heads")
    return quotient


def _bits_per_token(config: dict, dtype: object) -> int:
    bits = _bits(dtype)
    layers, heads = config["num_hidden_layers"], config["num_attention_heads"]
    _check_positive(layers, heads)
    kv_heads = config.get("num_key_value_heads")
    if kv_heads is None:
        kv_heads = heads
    _check_positive(kv_heads)
    if kv_heads > heads or heads % kv_heads:
        raise ValueError("every KV head must serve the same number of query heads")
    return 2 * layers * kv_heads * _head_dim(config, heads) * bits


def kv_cache_bytes(config: dict, seq_len: int, batch_size: int = 1, dtype: str = "fp16") -> int:
    _check_positive(seq_len, batch_size)
    bits = _bits_per_token(config, dtype) * seq_len * batch_size
    return bits // 8


def max_sequences(gpu_bytes: int, weight_bytes: int, config: dict, seq_len: int, dtype: str = "fp16") -> int:
    _check_positive(gpu_bytes)
    if not _is_int(weight_bytes) or weight_bytes < 0:
        raise ValueError("weight_bytes must be an int >= 0")
    _check_positive(seq_len)
    per_sequence = _bits_per_token(config, dtype) * seq_len // 8
    free = max(gpu_bytes - weight_bytes, 0)
    count, _ = divmod(free, per_sequence)
    return count
