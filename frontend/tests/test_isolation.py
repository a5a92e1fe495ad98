"""Another learner cannot read your draft, your history, your submission's state or its live channel."""

from __future__ import annotations

from grader.constants import Kind


def test_another_learner_cannot_read_your_draft(kv_rung, learner_client, other_learner_client):
    learner_client.post("/rungs/kv-cache-size/draft", {"code": "lena_secret = 1\n"})
    response = other_learner_client.get("/rungs/kv-cache-size/draft")
    assert response.status_code == 404
    assert "lena_secret" not in other_learner_client.get("/rungs/kv-cache-size/").content.decode()


def test_history_lists_only_your_own_attempts(learner, other_learner, learner_client, other_learner_client, make_submission):
    mine = make_submission(learner, code="lena_attempt = 1\n")
    theirs = make_submission(other_learner, kind=Kind.SUBMIT, code="omar_attempt = 2\n")

    lena_history = learner_client.get("/rungs/kv-cache-size/history").json()["attempts"]
    assert [a["id"] for a in lena_history] == [mine.pk]
    assert lena_history[0]["code"] == "lena_attempt = 1\n"
    omar_history = other_learner_client.get("/rungs/kv-cache-size/history").json()["attempts"]
    assert [a["id"] for a in omar_history] == [theirs.pk]
    assert "lena_attempt" not in str(omar_history)


def test_another_learner_gets_404_for_your_submission_state(learner, other_learner_client, make_submission):
    submission = make_submission(learner)
    assert other_learner_client.get(f"/submissions/{submission.pk}/state").status_code == 404


def test_the_live_channel_refuses_another_learner(learner, other_learner_client, make_submission):
    submission = make_submission(learner)
    assert other_learner_client.get(f"/events/{submission.channel}").status_code == 404


def test_an_unknown_channel_is_404(learner_client, kv_rung):
    assert learner_client.get("/events/not-a-real-channel").status_code == 404
    # Bytes the database cannot hold in a text (NUL) were a 500.
    for odd in ("%00", "a%00b", "%C3%A9", "x" * 300, "a.b"):
        assert learner_client.get(f"/events/{odd}").status_code == 404, odd


def test_staff_may_read_any_submission_state(learner, admin_user, client, make_submission):
    submission = make_submission(learner)
    client.force_login(admin_user)
    assert client.get(f"/submissions/{submission.pk}/state").status_code == 200
