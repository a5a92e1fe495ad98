"""A reply to "report a problem" reaches the learner as a notification, leading to the open report box with the note."""

from __future__ import annotations

import pytest

from aids import services
from aids.exceptions import AidRefused
from core.models import Notification

pytestmark = pytest.mark.django_db


def test_resolving_a_report_notifies_its_learner_once_and_nobody_else(kv_rung, learner, other_learner, learner_client, other_learner_client, admin_user):
    report = services.file_report(user=learner, rung=kv_rung, message="The unit in the text is wrong.", code="")
    services.file_report(user=other_learner, rung=kv_rung, message="Mine is still open.", code="")
    assert not Notification.objects.exists()  # filing tells nobody
    services.resolve_report(report, by=admin_user, note="Fixed in version 2, thanks.")
    with pytest.raises(AidRefused):
        services.resolve_report(report, by=admin_user, note="again")  # a refused resolve notifies nobody

    notice = Notification.objects.get()
    assert (notice.user, notice.kind, notice.url) == (learner, "report_reply", f"/rungs/{kv_rung.slug}/#report-problem")
    listed = learner_client.get("/notifications/").content.decode()
    assert f'href="/rungs/{kv_rung.slug}/#report-problem"' in listed and kv_rung.current_version.title in listed
    workspace = learner_client.get(f"/rungs/{kv_rung.slug}/").content.decode()
    assert 'id="report-problem" open' in workspace and "Fixed in version 2, thanks." in workspace
    assert "#report-problem" not in other_learner_client.get("/notifications/").content.decode()
