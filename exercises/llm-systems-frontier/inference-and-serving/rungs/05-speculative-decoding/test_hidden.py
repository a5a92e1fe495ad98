"""Hidden tests: losslessness checked statistically, acceptance rate, bonus token, seeds, the formula."""

import pytest
import torch
from grading import assert_close, assert_distribution, assert_equal, assert_tensor


def make_batch(p_rows, q_rows, n, seed):
    """n identical rows: target probs [n, k+1, V], draft probs [n, k, V], drafts sampled from q."""
    p = torch.tensor(p_rows, dtype=torch.float32)
    q = torch.tensor(q_rows, dtype=torch.float32)
    k, vocab = q.shape
    gen = torch.Generator().manual_seed(seed)
    drafts = torch.stack([torch.multinomial(q[i], n, replacement=True, generator=gen) for i in range(k)], dim=1)
    return drafts, q.expand(n, k, vocab).clone(), p.expand(n, k + 1, vocab).clone()


P_FIRST = [0.05, 0.15, 0.40, 0.30, 0.10]
Q_FIRST = [0.40, 0.30, 0.10, 0.15, 0.05]


def test_first_token_follows_target_distribution(solution):
    # Drafts come from q; whatever is accepted or resampled, the first emitted token must follow p.
    drafts, q, p = make_batch([P_FIRST, [0.2] * 5, [0.2] * 5], [Q_FIRST, [0.2] * 5], 8000, 11)
    out = solution.verify_draft(drafts, q, p, 2024)
    assert_tensor(out, shape=(8000, 3), dtype=torch.int64, what="emitted tokens, 8000 rows, k=2")
    assert_distribution(out[:, 0], torch.tensor(P_FIRST), max_tv=0.04, what="first emitted token over 8000 rows")


def test_first_draft_acceptance_rate_matches_overlap(solution):
    p0, q0 = [0.5, 0.2, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25]
    drafts, q, p = make_batch([p0, [0.25] * 4], [q0], 6000, 12)
    out = solution.verify_draft(drafts, q, p, 77)
    accepted = (out[:, 1] >= 0).double().mean().item()
    # P(accept) = sum over x of q(x) min(1, p(x)/q(x)) = sum of min(p, q) = 0.75
    assert abs(accepted - 0.75) <= 0.03, (
        f"first draft accepted in {accepted:.3f} of 6000 rows; expected 0.75 +- 0.03 (the overlap sum of min(p, q))"
    )


def test_second_token_follows_target_after_first_accepted(solution):
    same = [0.3, 0.4, 0.3]
    p1, q1 = [0.1, 0.2, 0.7], [0.6, 0.3, 0.1]
    drafts, q, p = make_batch([same, p1, [0.2, 0.3, 0.5]], [same, q1], 6000, 13)
    out = solution.verify_draft(drafts, q, p, 99)
    assert_equal((out[:, 0] == drafts[:, 0]).all().item(), True, "first draft accepted in every row (p equals q there)")
    assert_distribution(out[:, 1], torch.tensor(p1), max_tv=0.04, what="second emitted token over 6000 rows")


def test_bonus_token_comes_from_the_extra_target_row(solution):
    a, b = [0.5, 0.25, 0.25], [0.2, 0.2, 0.6]
    bonus = [0.1, 0.6, 0.3]
    drafts, q, p = make_batch([a, b, bonus], [a, b], 6000, 14)
    out = solution.verify_draft(drafts, q, p, 5)
    assert_equal(out[:, :2].tolist() == drafts.tolist(), True, "both drafts accepted in every row (p equals q)")
    assert_distribution(out[:, 2], torch.tensor(bonus), max_tv=0.04, what="bonus token over 6000 rows")


def test_rejection_ends_the_block(solution):
    n = 40
    p = [[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.7, 0.3], [0.25] * 4, [0.25] * 4]
    q = [[0.5, 0.5, 0.0, 0.0], [0.0, 0.5, 0.5, 0.0], [0.25] * 4]
    drafts, q_t, p_t = make_batch(p, q, n, 15)
    drafts[:, 1] = 1  # the target gives draft token 1 probability 0 at position 1
    out = solution.verify_draft(drafts, q_t, p_t, 3)
    # max(0, p - q) at position 1 is [0, 0, 0.2, 0.3]: the replacement is 2 or 3, then nothing more.
    assert_equal(out[:, 0].tolist(), drafts[:, 0].tolist(), "first drafts (always accepted)")
    assert set(out[:, 1].tolist()) <= {2, 3}, f"replacement tokens must come from max(0, p - q) = {{2, 3}}, got {sorted(set(out[:, 1].tolist()))}"
    assert_equal(out[:, 2:].tolist(), [[-1, -1]] * n, "tokens after the first rejection (must be -1 padding)")


def test_draft_the_target_prefers_is_always_accepted(solution):
    n = 200
    # At every position the drafted token has p(x) >= q(x), so min(1, p/q) = 1.
    p = [[0.1, 0.7, 0.2], [0.5, 0.1, 0.4], [0.3, 0.3, 0.4], [0.0, 1.0, 0.0]]
    q = [[0.3, 0.4, 0.3], [0.3, 0.4, 0.3], [0.3, 0.4, 0.3]]
    drafts = torch.tensor([[1, 0, 2]]).expand(n, 3).clone()
    q_t = torch.tensor(q).expand(n, 3, 3).clone()
    p_t = torch.tensor(p).expand(n, 4, 3).clone()
    out = solution.verify_draft(drafts, q_t, p_t, 8)
    assert_equal(out.tolist(), [[1, 0, 2, 1]] * n, "rows whose drafts the target likes more than the draft model did")


def test_same_seed_gives_same_tokens(solution):
    drafts, q, p = make_batch([P_FIRST, [0.2] * 5, [0.2] * 5], [Q_FIRST, [0.2] * 5], 300, 16)
    first = solution.verify_draft(drafts, q, p, 31337)
    second = solution.verify_draft(drafts, q, p, 31337)
    assert_equal(first.tolist(), second.tolist(), "two runs with the same seed (all randomness must come from it)")


def test_expected_tokens_formula(solution):
    cases = [((0.6, 3), 2.176), ((0.0, 5), 1.0), ((0.9, 0), 1.0), ((0.5, 1), 1.5), ((0.95, 10), 8.623998154)]
    for (alpha, k), expected in cases:
        assert_close(
            solution.expected_tokens_per_pass(alpha, k),
            expected,
            rtol=1e-4,
            atol=1e-9,
            what=f"expected tokens per pass, alpha {alpha}, k {k}",
        )


def test_expected_tokens_when_alpha_is_one(solution):
    assert_close(solution.expected_tokens_per_pass(1.0, 4), 5.0, what="expected tokens per pass, alpha 1, k 4")
    assert_close(solution.expected_tokens_per_pass(1.0, 0), 1.0, what="expected tokens per pass, alpha 1, k 0")


def test_invalid_arguments_raise(solution):
    for alpha, k in ((-0.1, 3), (1.5, 3), (0.5, -1)):
        with pytest.raises(ValueError):
            solution.expected_tokens_per_pass(alpha, k)
    drafts, q, p = make_batch([[0.5, 0.5], [0.5, 0.5]], [[0.5, 0.5]], 4, 17)
    with pytest.raises(ValueError):
        solution.verify_draft(drafts, q, p[:, :1], 0)  # target_probs lacks the row for the bonus token
