"""Hidden tests: edge cases of the rules, with other configs than the examples."""

import pytest
from grading import GB, assert_bytes, assert_int

FALCON_7B = {  # multi-query attention: one KV head
    "num_hidden_layers": 32,
    "num_attention_heads": 71,
    "num_key_value_heads": 1,
    "hidden_size": 4544,
    "model_type": "falcon",
}
GEMMA_7B = {  # head_dim stated explicitly, not hidden_size / heads (3072 / 16 = 192)
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "hidden_size": 3072,
    "head_dim": 256,
}
MISTRAL_7B = {
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "hidden_size": 4096,
}
SMALL = {"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 64}


def test_mqa_config_with_batch_and_bf16(solution):
    got = solution.kv_cache_bytes(FALCON_7B, 2048, batch_size=3, dtype="bf16")
    # 2 * 32 layers * 1 kv head * 2048 tokens * 64 head_dim * 3 seqs * 2 bytes
    assert_bytes(got, 50_331_648, "MQA (1 KV head of 71), 2048 tokens, batch 3, bf16")


def test_missing_or_null_kv_heads_means_mha(solution):
    gpt2 = {"num_hidden_layers": 12, "num_attention_heads": 12, "hidden_size": 768}
    expected = 2 * 12 * 12 * 1024 * 64 * 5 * 4
    got = solution.kv_cache_bytes(gpt2, 1024, batch_size=5, dtype="fp32")
    assert_bytes(got, expected, "config without num_key_value_heads (12 heads), 1024 tokens, batch 5, fp32")
    got = solution.kv_cache_bytes(dict(gpt2, num_key_value_heads=None, head_dim=None), 1024, 5, "fp32")
    assert_bytes(got, expected, "config with num_key_value_heads=None and head_dim=None, 1024 tokens, batch 5, fp32")


def test_explicit_head_dim_is_used(solution):
    got = solution.kv_cache_bytes(GEMMA_7B, 4096)
    assert_bytes(got, 2 * 28 * 16 * 4096 * 256 * 2, "config with head_dim=256 and hidden_size=3072 (16 heads), fp16")
    odd_width = {"num_hidden_layers": 4, "num_attention_heads": 12, "hidden_size": 1000, "head_dim": 80}
    got = solution.kv_cache_bytes(odd_width, 100, dtype="int8")
    assert_bytes(got, 2 * 4 * 12 * 100 * 80, "config with head_dim=80 and hidden_size=1000 not divisible by 12 heads, int8")


def test_element_size_of_every_dtype(solution):
    elements = 2 * 2 * 2 * 10 * 16  # 2 x layers x kv_heads x tokens x head_dim
    table = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1}
    for dtype, size in table.items():
        got = solution.kv_cache_bytes(SMALL, 10, batch_size=1, dtype=dtype)
        assert_bytes(got, elements * size, f"cache of {elements} elements in {dtype}")
    got = solution.kv_cache_bytes(SMALL, 10, batch_size=1, dtype="int4")
    assert_bytes(got, elements // 2, f"cache of {elements} elements in int4")


def test_int4_packs_two_values_per_byte(solution):
    config = {"num_hidden_layers": 3, "num_attention_heads": 6, "num_key_value_heads": 3, "hidden_size": 42}
    got = solution.kv_cache_bytes(config, 5, batch_size=3, dtype="int4")
    # 2 * 3 * 3 * 5 * 7 * 3 = 1890 elements at half a byte each
    assert_bytes(got, 945, "int4 cache: 3 layers, 3 KV heads, head_dim 7, 5 tokens, batch 3")


def test_unknown_dtype_raises(solution):
    for dtype in ("fp64", "int2", "", "half"):
        with pytest.raises(ValueError):
            solution.kv_cache_bytes(MISTRAL_7B, 128, 1, dtype)


def test_non_positive_sizes_raise(solution):
    bad_configs = [
        dict(MISTRAL_7B, num_hidden_layers=0),
        dict(MISTRAL_7B, num_attention_heads=-32),
        dict(MISTRAL_7B, num_key_value_heads=0),
        dict(MISTRAL_7B, head_dim=0),
        dict(MISTRAL_7B, hidden_size=-4096),
    ]
    for config in bad_configs:
        with pytest.raises(ValueError):
            solution.kv_cache_bytes(config, 128)
    with pytest.raises(ValueError):
        solution.kv_cache_bytes(MISTRAL_7B, 0)
    with pytest.raises(ValueError):
        solution.kv_cache_bytes(MISTRAL_7B, -5)
    with pytest.raises(ValueError):
        solution.kv_cache_bytes(MISTRAL_7B, 128, batch_size=0)


def test_kv_heads_must_divide_query_heads(solution):
    for kv_heads in (6, 64, 5):
        with pytest.raises(ValueError):
            solution.kv_cache_bytes(dict(MISTRAL_7B, num_key_value_heads=kv_heads), 128)


def test_hidden_size_must_split_evenly_without_head_dim(solution):
    with pytest.raises(ValueError):
        solution.kv_cache_bytes({"num_hidden_layers": 4, "num_attention_heads": 12, "hidden_size": 1000}, 64)
    with pytest.raises(ValueError):
        solution.kv_cache_bytes({"num_hidden_layers": 4, "num_attention_heads": 7, "hidden_size": 512, "head_dim": None}, 64)


def test_max_sequences_rounds_down_with_gqa_and_fp8(solution):
    # per sequence: 2 * 32 * 8 * 32768 * 128 * 1 byte = 2 GiB; free 65.5e9 bytes = 30.5 of them
    got = solution.max_sequences(80 * GB, 14_483_464_192, MISTRAL_7B, 32768, dtype="fp8")
    assert_int(got, 30, "32k-token fp8 sequences, 8 KV heads, 80 GB card, 14.48 GB of weights", "sequences")
    got = solution.max_sequences(24 * GB, 4 * GB, FALCON_7B, 4096, "int4")
    # per sequence: 2 * 32 * 1 * 4096 * 64 * 0.5 = 8,388,608 bytes
    assert_int(got, 20 * GB // 8_388_608, "4096-token int4 sequences of an MQA model on a 24 GB card", "sequences")


def test_max_sequences_is_zero_when_weights_leave_no_room(solution):
    per_seq = 2 * 28 * 16 * 1000 * 256 * 2
    cases = [
        (16 * GB, 17 * GB, "weights larger than the card"),
        (16 * GB, 16 * GB, "weights exactly filling the card"),
        (16 * GB, 16 * GB - per_seq + 1, "one byte short of room for one sequence"),
    ]
    for gpu, weights, label in cases:
        got = solution.max_sequences(gpu, weights, GEMMA_7B, 1000)
        assert_int(got, 0, f"max_sequences with {label}", "sequences")
    got = solution.max_sequences(16 * GB, 16 * GB - per_seq, GEMMA_7B, 1000)
    assert_int(got, 1, "max_sequences with room for exactly one sequence", "sequences")


def test_max_sequences_validates_inputs(solution):
    with pytest.raises(ValueError):
        solution.max_sequences(0, 0, MISTRAL_7B, 1024)
    with pytest.raises(ValueError):
        solution.max_sequences(-80 * GB, 0, MISTRAL_7B, 1024)
    with pytest.raises(ValueError):
        solution.max_sequences(80 * GB, -1, MISTRAL_7B, 1024)
    with pytest.raises(ValueError):
        solution.max_sequences(80 * GB, 10 * GB, MISTRAL_7B, 1024, dtype="fp64")
    with pytest.raises(ValueError):
        solution.max_sequences(80 * GB, 10 * GB, MISTRAL_7B, 0)
