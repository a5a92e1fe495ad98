"""Visible tests: the two certain cases of the worked example, and the speed-up formula."""

import torch
from grading import assert_close, assert_equal, assert_tensor


def test_identical_models_accept_every_draft(solution):
    # Draft and target agree exactly: every draft is accepted and one bonus token follows.
    probs = torch.tensor([[0.1, 0.6, 0.2, 0.1], [0.3, 0.3, 0.3, 0.1], [0.0, 0.5, 0.0, 0.5], [0.25, 0.25, 0.25, 0.25]])
    draft_tokens = torch.tensor([[1, 2, 3]])
    out = solution.verify_draft(draft_tokens, probs[None, :3], probs[None], 0)
    assert_tensor(out, shape=(1, 4), dtype=torch.int64, what="emitted tokens for 1 row with k=3 drafts")
    assert_equal(out[0, :3].tolist(), [1, 2, 3], "the 3 accepted drafts")
    assert 0 <= int(out[0, 3]) < 4, f"bonus token must be a token id in [0, 4), got {int(out[0, 3])}"


def test_draft_token_the_target_rules_out_is_replaced(solution):
    # The target gives token 2 probability 0, so the draft of 2 is always rejected;
    # max(0, p - q) = [0.6, 0, 0, 0], so the replacement is always token 0.
    p = torch.tensor([0.6, 0.4, 0.0, 0.0])
    q = torch.tensor([0.0, 0.4, 0.6, 0.0])
    n = 5
    target = torch.stack([p, torch.full((4,), 0.25)]).expand(n, 2, 4).clone()
    draft = q.expand(n, 1, 4).clone()
    out = solution.verify_draft(torch.full((n, 1), 2), draft, target, 1)
    assert_equal(out.tolist(), [[0, -1]] * n, "emitted tokens when the only draft is rejected")


def test_expected_tokens_worked_example(solution):
    assert_close(solution.expected_tokens_per_pass(0.8, 4), 3.3616, what="expected tokens per target pass, alpha 0.8, k 4")
