"""Size the KV cache.

Fill in the two functions below. See the instructions for the config keys,
the dtype table and the rules for bad input (raise ValueError).
"""

from __future__ import annotations

# Bits per element for each dtype name: int4 packs two values into one byte.
# Count in bits and divide by 8 at the end, so the result stays an exact int.
BITS_PER_ELEMENT = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4}


def kv_cache_bytes(config: dict, seq_len: int, batch_size: int = 1, dtype: str = "fp16") -> int:
    """Return the bytes needed to cache K and V for a batch.

    config: a Hugging Face style dict with num_hidden_layers,
        num_attention_heads, and optionally num_key_value_heads (absent or
        None: same as num_attention_heads), head_dim (absent or None:
        hidden_size // num_attention_heads) and hidden_size.
    seq_len: tokens cached per sequence.
    batch_size: number of sequences.
    dtype: one of "fp32", "fp16", "bf16", "fp8", "int8", "int4".

    Returns an int. Raises ValueError on bad input.
    """
    raise NotImplementedError


def max_sequences(gpu_bytes: int, weight_bytes: int, config: dict, seq_len: int, dtype: str = "fp16") -> int:
    """Return how many sequences of seq_len tokens fit beside the weights.

    Whole sequences only (round down); 0 when the weights leave no room.
    Raises ValueError on bad input.
    """
    raise NotImplementedError
