from __future__ import annotations

from html import escape

import pytest
from django.conf import settings as django_settings
from django.core import mail

from grader.constants import Outcome
from grader.models import Progress


def test_the_catalog_and_track_show_the_learners_progress(kv_rung, learner, learner_client):
    Progress.objects.create(user=learner, rung=kv_rung, best_outcome=Outcome.PASSED, solved_at=kv_rung.current_version.created_at)
    catalog = learner_client.get("/").content.decode()
    assert escape(kv_rung.module.title) in catalog
    track = learner_client.get(f"/tracks/{kv_rung.module.track.slug}/").content.decode()
    assert "1/" in track and "solved" in track


def test_the_module_ladder_marks_a_solved_rung(kv_rung, learner, learner_client):
    before = learner_client.get(f"/modules/{kv_rung.module.slug}/").content.decode()
    assert 'data-rung="kv-cache-size">not started' in before
    Progress.objects.create(user=learner, rung=kv_rung, best_outcome=Outcome.PASSED, solved_at=kv_rung.current_version.created_at)
    after = learner_client.get(f"/modules/{kv_rung.module.slug}/").content.decode()
    assert "✓ solved" in after
    assert "math.bundle.js" in after and "katex.min.css" in after


def test_the_workspace_has_three_panels_and_the_editor(kv_rung, learner_client):
    page = learner_client.get("/rungs/kv-cache-size/").content.decode()
    for marker in ('id="panel-instructions"', 'class="panel editor-panel"', 'id="panel-output"', "editor.bundle.js", 'aria-live="polite"'):
        assert marker in page
    assert f"{kv_rung.current_version.minutes} min" in page


def test_the_static_bundles_are_built(settings):
    from pathlib import Path

    static = Path(__file__).resolve().parents[1] / "static" / "frontend"
    assert (static / "editor.bundle.js").stat().st_size > 100_000
    assert (static / "math.bundle.js").stat().st_size > 50_000
    css = (static / "katex" / "katex.min.css").read_text()
    assert "woff2" in css and ".ttf" not in css
    assert list((static / "katex" / "fonts").glob("*.woff2"))


# NOTE: Django's admin ships registration/password_*.html too, and app
# templates are searched in INSTALLED_APPS order: ours are used only when
# "frontend" is listed before "django.contrib.admin" (platform/config/settings.py).
def test_our_registration_templates_win_over_the_admins():
    apps = django_settings.INSTALLED_APPS
    assert apps.index("frontend") < apps.index("django.contrib.admin"), "list 'frontend' before 'django.contrib.admin' in INSTALLED_APPS"


def test_password_reset_sends_a_link_that_lets_you_set_a_new_password(client, learner, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    learner.email = "lena@example.com"
    learner.save()
    assert client.get("/accounts/password_reset/").status_code == 200
    response = client.post("/accounts/password_reset/", {"email": "lena@example.com"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1
    link = next(line for line in mail.outbox[0].body.splitlines() if "/accounts/reset/" in line).strip()
    path = link.split("testserver", 1)[1]
    form_page = client.get(path, follow=True)
    assert "Choose a new password" in form_page.content.decode()
    done = client.post(form_page.redirect_chain[-1][0], {"new_password1": "a-brand-new-pass-42", "new_password2": "a-brand-new-pass-42"}, follow=True)
    assert "Password set" in done.content.decode()
    learner.refresh_from_db()
    assert learner.check_password("a-brand-new-pass-42")


def test_a_learner_can_change_their_password(learner_client, learner):
    assert "Change your password" in learner_client.get("/accounts/password_change/").content.decode()
    response = learner_client.post(
        "/accounts/password_change/",
        {"old_password": "learner-pass-123", "new_password1": "another-long-pass-77", "new_password2": "another-long-pass-77"},
        follow=True,
    )
    assert "Password changed" in response.content.decode()
    learner.refresh_from_db()
    assert learner.check_password("another-long-pass-77")


def test_signup_takes_an_optional_email(client, django_user_model):
    response = client.post("/signup/", {"username": "nia", "email": "nia@example.com", "password1": "a-long-pass-word-9", "password2": "a-long-pass-word-9"})
    assert response.status_code == 302
    assert django_user_model.objects.get(username="nia").email == "nia@example.com"


@pytest.mark.parametrize("taken", ["lena", "LENA", "\uff4c\uff45\uff4e\uff41"])  # the last in fullwidth letters
def test_signup_with_a_name_already_taken_says_so(client, learner, taken):
    response = client.post("/signup/", {"username": taken, "password1": "a-long-pass-word-9", "password2": "a-long-pass-word-9"})
    assert response.status_code == 200
    assert "A user with that username already exists." in response.content.decode()


@pytest.mark.parametrize("look_alike", ["\u0430dmin", "lena\u0307", "j\u00f6rg"])  # Cyrillic a (U+0430); a combining dot; an umlaut
def test_signup_refuses_names_outside_latin_letters(client, django_user_model, look_alike):
    django_user_model.objects.create_user("admin", password="x-long-pass-word-1")
    response = client.post("/signup/", {"username": look_alike, "password1": "a-long-pass-word-9", "password2": "a-long-pass-word-9"})
    assert response.status_code == 200
    assert "letters a-z and A-Z, digits" in response.content.decode()
    assert django_user_model.objects.count() == 1


def test_signup_refuses_the_names_kept_for_lms_accounts(client, django_user_model):
    response = client.post("/signup/", {"username": "LTI-1-abc", "password1": "a-long-pass-word-9", "password2": "a-long-pass-word-9"})
    assert response.status_code == 200 and "kept for accounts made by an LMS" in response.content.decode()
    assert not django_user_model.objects.filter(username__iexact="lti-1-abc").exists()
