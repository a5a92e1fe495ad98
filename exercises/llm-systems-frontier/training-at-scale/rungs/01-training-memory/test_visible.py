"""Visible tests: the ZeRO paper's 7.5B model on 64 GPUs."""

from grading import assert_bytes

P = 7_500_000_000


def test_zero_stages_for_the_papers_example(solution):
    expected = {0: 120_000_000_000, 1: 31_406_250_000, 2: 16_640_625_000, 3: 1_875_000_000}
    for stage, want in expected.items():
        assert_bytes(solution.model_state_bytes(P, 64, stage), want, f"model states per GPU, 7.5B params, 64 GPUs, ZeRO stage {stage}")


def test_activations_with_and_without_recomputation(solution):
    assert_bytes(solution.activation_bytes(32, 2048, 1, 4096, 32), 30_601_641_984, "activations, 32 layers, s=2048, b=1, h=4096, a=32")
    got = solution.activation_bytes(32, 2048, 1, 4096, 32, recompute=True)
    assert_bytes(got, 536_870_912, "the same activations with full recomputation")
