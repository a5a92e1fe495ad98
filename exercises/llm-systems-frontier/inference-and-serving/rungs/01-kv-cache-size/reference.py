"""Reference solution: size the KV cache."""

from __future__ import annotations

# Bits per element: int4 packs two values into one byte.
BITS_PER_ELEMENT = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4}


def _positive_int(value: object, name: str) -> int:
    # A size is a Python int: a bool, a float (even 128.0) or a string is refused.
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def _bits(dtype: str) -> int:
    # A dtype that is not a str (None, 16, a list) is refused too, as ValueError.
    if not isinstance(dtype, str) or dtype not in BITS_PER_ELEMENT:
        raise ValueError(f"unknown dtype {dtype!r}; expected one of {sorted(BITS_PER_ELEMENT)}")
    return BITS_PER_ELEMENT[dtype]


def _kv_shape(config: dict) -> tuple[int, int, int]:
    """Return (layers, kv_heads, head_dim) after validating the config."""
    layers = _positive_int(config["num_hidden_layers"], "num_hidden_layers")
    heads = _positive_int(config["num_attention_heads"], "num_attention_heads")

    kv_heads = config.get("num_key_value_heads")
    if kv_heads is None:
        kv_heads = heads  # no KV-head count: plain multi-head attention
    kv_heads = _positive_int(kv_heads, "num_key_value_heads")
    if heads % kv_heads != 0:
        raise ValueError(f"num_key_value_heads={kv_heads} does not divide num_attention_heads={heads}")

    head_dim = config.get("head_dim")
    if head_dim is None:
        if config.get("hidden_size") is None:
            raise ValueError("the config has neither head_dim nor hidden_size")
        hidden = _positive_int(config["hidden_size"], "hidden_size")
        if hidden % heads != 0:
            raise ValueError(f"hidden_size={hidden} is not divisible by num_attention_heads={heads}")
        head_dim = hidden // heads
    head_dim = _positive_int(head_dim, "head_dim")
    return layers, kv_heads, head_dim


def kv_cache_bytes(config: dict, seq_len: int, batch_size: int = 1, dtype: str = "fp16") -> int:
    """Bytes needed to cache K and V for `batch_size` sequences of `seq_len` tokens."""
    bits = _bits(dtype)
    layers, kv_heads, head_dim = _kv_shape(config)
    seq_len = _positive_int(seq_len, "seq_len")
    batch_size = _positive_int(batch_size, "batch_size")
    elements = 2 * layers * kv_heads * seq_len * head_dim * batch_size
    return (elements * bits + 7) // 8  # whole bytes (always exact: elements is even)


def max_sequences(gpu_bytes: int, weight_bytes: int, config: dict, seq_len: int, dtype: str = "fp16") -> int:
    """How many full `seq_len`-token caches fit on the GPU beside the weights."""
    gpu_bytes = _positive_int(gpu_bytes, "gpu_bytes")
    if isinstance(weight_bytes, bool) or not isinstance(weight_bytes, int) or weight_bytes < 0:
        raise ValueError(f"weight_bytes must be a non-negative int, got {weight_bytes!r}")
    per_sequence = kv_cache_bytes(config, seq_len, 1, dtype)
    free = gpu_bytes - weight_bytes
    if free <= 0:
        return 0
    return free // per_sequence
