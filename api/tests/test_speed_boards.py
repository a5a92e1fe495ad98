"""The API's Submit carries a speed rung's prediction, and its boards are the workspace's (issue 60, items 7 and 8)."""

from __future__ import annotations

from typing import Any

from grader import messages
from grader.models import SpeedPrediction, SpeedStanding, Submission

from .conftest import TokenClient


def _speed_rung(catalog: Any) -> Any:
    from exercises.models import Rung

    rung = Rung.objects.select_related("current_version").get(slug="batched-kv-gather")
    version = rung.current_version
    assert version is not None
    version.speed = {**version.speed, "section": {**version.speed["section"], "predict": "required"}}
    version.save(update_fields=["speed"])
    return rung


def test_a_submit_needs_the_prediction_the_rung_asks_for(catalog: Any, learner: Any, learner_api: TokenClient, enqueued: Any) -> None:
    rung = _speed_rung(catalog)
    body = {"code": "x = 1\n", "version": rung.current_version.number}
    refused = learner_api.post(f"/rungs/{rung.slug}/submit", body)
    assert refused.status_code == 400 and refused.json()["error"] == messages.PREDICTION_REQUIRED
    assert learner_api.post(f"/rungs/{rung.slug}/submit", {**body, "prediction": 2.5}).status_code == 202
    assert SpeedPrediction.objects.get(submission=Submission.objects.get(user=learner)).predicted == 2.5


def test_the_boards_name_the_caller_you_and_others_anonymously(catalog: Any, learner: Any, other_learner: Any, learner_api: TokenClient) -> None:
    rung = _speed_rung(catalog)
    for user, ratio in ((learner, 2.0), (other_learner, 4.0)):
        SpeedStanding.objects.create(user=user, rung=rung, machine="Test CPU", best_ratio=ratio)
    boards = learner_api.get(f"/rungs/{rung.slug}/speed-boards").json()
    assert [(b["machine"], [(r["name"], r["ratio"]) for r in b["rows"]]) for b in boards] == [
        ("Test CPU", [(messages.BOARD_ANONYMOUS, 4.0), (messages.BOARD_YOU, 2.0)])
    ]
    assert learner_api.get("/rungs/kv-cache-size/speed-boards").json() == []
