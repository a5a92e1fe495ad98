"""A speed rung's workspace: its board (names as chosen, else anonymous), the prediction field
the rung asks for, and the learner's setting for their name on boards (issue 60, items 7 and 8)."""

from __future__ import annotations

from typing import Any

import pytest

from grader import messages, speed_board
from grader.models import BoardName, SpeedPrediction, SpeedStanding, Submission

URL = "/rungs/batched-kv-gather/"
SUBMIT_URL = "/rungs/batched-kv-gather/submit"
NAME_URL = "/accounts/board-name/"


@pytest.fixture
def speed_rung(catalog: Any) -> Any:
    from exercises.models import Rung

    return Rung.objects.select_related("current_version").get(slug="batched-kv-gather")


def _asks_for_prediction(rung: Any, mode: str) -> None:
    version = rung.current_version
    version.speed = {**version.speed, "section": {**version.speed["section"], "predict": mode}}
    version.save(update_fields=["speed"])


def _stand(user: Any, rung: Any, ratio: float) -> None:
    SpeedStanding.objects.create(user=user, rung=rung, machine="Test CPU", best_ratio=ratio, measured_ratio=ratio)


def test_the_board_shows_the_viewer_as_you_and_others_anonymous(speed_rung: Any, learner: Any, other_learner: Any, learner_client: Any) -> None:
    _stand(learner, speed_rung, 2.0)
    _stand(other_learner, speed_rung, 4.0)
    text = learner_client.get(URL).content.decode()
    assert 'id="speed-boards"' in text and "On Test CPU: 2 learners" in text
    assert messages.BOARD_ANONYMOUS in text and ">You<" in text
    assert other_learner.username not in text


def test_a_chosen_name_shows_on_the_board(speed_rung: Any, other_learner: Any, learner_client: Any) -> None:
    _stand(other_learner, speed_rung, 4.0)
    speed_board.set_board_name(other_learner, "Gather Wizard")
    assert "Gather Wizard" in learner_client.get(URL).content.decode()


def test_a_rung_without_speed_has_no_board_and_no_prediction(kv_rung: Any, learner_client: Any) -> None:
    text = learner_client.get("/rungs/kv-cache-size/").content.decode()
    assert 'id="speed-boards"' not in text and 'id="speed-prediction"' not in text


def test_the_prediction_field_is_labelled_and_required_as_the_rung_says(speed_rung: Any, learner_client: Any) -> None:
    assert 'id="speed-prediction"' not in learner_client.get(URL).content.decode()
    _asks_for_prediction(speed_rung, "required")
    text = learner_client.get(URL).content.decode()
    assert '<label for="speed-prediction">' in text and 'aria-describedby="speed-prediction-help"' in text and " required>" in text


def test_submit_keeps_the_prediction_and_refuses_a_missing_or_bad_one(speed_rung: Any, learner: Any, learner_client: Any, enqueued: Any) -> None:
    _asks_for_prediction(speed_rung, "required")
    version = speed_rung.current_version.number
    missing = learner_client.post(SUBMIT_URL, {"code": "x = 1\n", "version": version})
    assert missing.status_code == 400 and missing.json()["error"] == messages.PREDICTION_REQUIRED
    for bad in ("fast", "nan", "0", "1e9"):
        refused = learner_client.post(SUBMIT_URL, {"code": "x = 1\n", "version": version, "prediction": bad})
        assert refused.status_code == 400 and refused.json()["error"] == messages.PREDICTION_INVALID, bad
    accepted = learner_client.post(SUBMIT_URL, {"code": "x = 1\n", "version": version, "prediction": "3.5"})
    assert accepted.status_code == 202
    assert SpeedPrediction.objects.get(submission=Submission.objects.get(user=learner)).predicted == 3.5


def test_the_name_on_boards_is_off_by_default_and_validated(learner: Any, other_learner: Any, learner_client: Any) -> None:
    page = learner_client.get(NAME_URL).content.decode()
    assert '<label for="id_shown">' in page and '<label for="id_name">' in page and 'checked' not in page
    assert learner_client.post(NAME_URL, {"shown": "on", "name": ""}).status_code == 400
    assert learner_client.post(NAME_URL, {"shown": "on", "name": "<b>x</b>"}).status_code == 400
    assert learner_client.post(NAME_URL, {"shown": "on", "name": other_learner.username}).status_code == 400
    saved = learner_client.post(NAME_URL, {"shown": "on", "name": "  Kernel   Fan "})
    assert saved.status_code == 200 and "“Kernel Fan”" in saved.content.decode()
    assert BoardName.objects.get(user=learner).name == "Kernel Fan"
    assert learner_client.post(NAME_URL, {"name": "Kernel Fan"}).status_code == 200  # unticked: anonymous again
    assert not BoardName.objects.filter(user=learner).exists()


def test_the_speed_workspace_stays_cheap_with_boards_on_three_machines(
    speed_rung: Any, learner: Any, django_user_model: Any, learner_client: Any, django_assert_max_num_queries: Any
) -> None:
    # The plain workspace's fourteen (test_query_counts), and the boards': the machine kinds, the learner's own,
    # their name, then per board its top rows, and the learner's rank where they are below them.
    others = django_user_model.objects.bulk_create([django_user_model(username=f"fast-{n}") for n in range(40)])
    for n, user in enumerate(others):
        SpeedStanding.objects.create(user=user, rung=speed_rung, machine=f"CPU {n % 4}", best_ratio=10.0 + n)
    _stand(learner, speed_rung, 2.0)
    with django_assert_max_num_queries(14 + 3 + 3 * 3):
        assert learner_client.get(URL).status_code == 200
