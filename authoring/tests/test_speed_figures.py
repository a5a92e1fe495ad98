"""A speed rung's dashboard shows the distribution of measured ratios and how well the class predicts (issue 60, items 1 and 8)."""

from __future__ import annotations

from typing import Any

from django.test import Client

from grader.models import SpeedStanding


def test_the_rung_dashboard_shows_the_speed_figures(catalog: Any, admin_user: Any, learner: Any, other_learner: Any) -> None:
    from exercises.models import Rung

    rung = Rung.objects.select_related("module").get(slug="batched-kv-gather")
    SpeedStanding.objects.create(user=learner, rung=rung, machine="Test CPU", measured_ratio=4.0, predicted=4.2, predicted_measured=4.0)
    SpeedStanding.objects.create(user=other_learner, rung=rung, machine="Test CPU", measured_ratio=1.2, predicted=10.0, predicted_measured=1.2)
    client = Client()
    client.force_login(admin_user)
    text = client.get(f"/author/modules/{rung.module.slug}/rungs/{rung.slug}/dashboard").content.decode()
    assert 'id="speed-figures"' in text and 'id="speed-ratios"' in text and 'id="speed-predictions"' in text
    assert "2 measurements" in text and "50% were within 1.25x" in text
    plain = client.get(f"/author/modules/{rung.module.slug}/rungs/kv-cache-size/dashboard")
    assert plain.status_code == 200 and 'id="speed-figures"' not in plain.content.decode()
