"""Visible tests: the worked example from the instructions."""

from grading import GB, GIB, assert_bytes, assert_int

LLAMA2_7B = {"num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 4096}


def test_worked_example_is_one_gib_per_sequence(solution):
    got = solution.kv_cache_bytes(LLAMA2_7B, 2048)
    assert_bytes(got, GIB, "KV cache of LLaMA-2-7B, 2048 tokens, fp16, batch 1")


def test_grouped_query_heads_shrink_the_cache(solution):
    config = dict(LLAMA2_7B, num_key_value_heads=8)
    got = solution.kv_cache_bytes(config, 8192, batch_size=4, dtype="fp16")
    assert_bytes(got, 4 * GIB, "KV cache with 8 KV heads, 8192 tokens, fp16, batch 4")


def test_max_sequences_on_a_40_gb_card(solution):
    got = solution.max_sequences(40 * GB, 13_476_831_232, LLAMA2_7B, 2048)
    assert_int(got, 24, "sequences of 2048 tokens beside 7B fp16 weights on a 40 GB card", "sequences")
