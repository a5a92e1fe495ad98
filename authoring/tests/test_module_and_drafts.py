"""Module metadata edited in the browser; drafts of a published rung stay invisible until published."""

from __future__ import annotations

import html
import re

import pytest

from authoring import services, transfer
from authoring.models import RungDraft
from exercises.models import Module, Rung
from grader import lifecycle
from grader.models import Progress

pytestmark = pytest.mark.django_db

MODULE = "inference-and-serving"


def _module_form(module: Module, **changes: str) -> dict[str, str]:
    data = {
        "track": str(module.track_id), "external_id": module.external_id, "title": module.title, "order": str(module.order),
        "audience": module.audience, "depth": module.depth, "summary": module.summary, "why_it_matters": module.why_it_matters,
        "concept_md": module.concept_md, "worked_example_md": module.worked_example_md, "reference_md": module.reference_md,
        "next_module_slug": module.next_module_slug, "one_liners_text": "\n".join(module.one_liners),
    }
    return {**data, **changes}


def test_saving_the_module_form_unchanged_changes_nothing_and_the_export_stays_the_same(catalog, admin_user, client):
    module = Module.objects.get(slug=MODULE)
    before = transfer.export_module(module)
    client.force_login(admin_user)
    page = client.get(f"/author/modules/{MODULE}/").content.decode()
    assert "Fast Transformer Decoding" in page  # the sources, as YAML
    sources = re.search(r'name="sources_yaml"[^>]*>\n?(.*?)</textarea>', page, re.S)
    assert sources
    response = client.post(f"/author/modules/{MODULE}/", _module_form(module, sources_yaml=html.unescape(sources.group(1))))
    assert response.status_code == 302
    assert transfer.export_module(Module.objects.get(slug=MODULE)) == before


def test_bad_sources_are_refused_with_the_key(catalog, admin_user, client):
    module = Module.objects.get(slug=MODULE)
    client.force_login(admin_user)
    response = client.post(f"/author/modules/{MODULE}/", _module_form(module, sources_yaml="- {kind: paper}\n"))
    assert response.status_code == 200
    assert "source 1: key &#x27;title&#x27;: Field required" in response.content.decode()


@pytest.mark.parametrize("url", ["javascript:alert(document.cookie)", "JavaScript:alert(1)", " https://x.org", "//evil.example/x", "data:text/html,x", "ftp://x.org/a"])
def test_a_source_address_must_be_http_or_https(catalog, admin_user, client, url):
    module = Module.objects.get(slug=MODULE)
    client.force_login(admin_user)
    response = client.post(f"/author/modules/{MODULE}/", _module_form(module, sources_yaml=f"- {{kind: paper, title: T, url: '{url}'}}\n"))
    assert response.status_code == 200
    assert "must be an http:// or https:// address" in html.unescape(response.content.decode())
    assert url not in [source.get("url") for source in Module.objects.get(slug=MODULE).sources]


def test_a_draft_of_a_published_rung_is_invisible_to_learners_until_published(catalog, admin_user, learner, client, in_process_runner):
    rung = Rung.objects.get(slug="kv-cache-size")
    draft = services.draft_from_version(rung.module, rung)
    draft.instructions_md = "# Size the KV cache\n\nA DRAFT-ONLY SENTENCE.\n"
    draft.save()
    client.force_login(learner)
    page = client.get("/rungs/kv-cache-size/").content.decode()
    assert "DRAFT-ONLY" not in page
    assert rung.versions.count() == 1
    client.force_login(admin_user)
    editor = client.get(f"/author/modules/{MODULE}/rungs/kv-cache-size/").content.decode()
    assert "DRAFT-ONLY" in editor and "Learners get <strong>version 1</strong>" in editor


def test_check_from_a_published_rung_without_a_draft_makes_one(catalog, admin_user, client, django_capture_on_commit_callbacks, monkeypatch):
    queued: list[int] = []
    monkeypatch.setattr(lifecycle, "enqueue", lambda kind, pk, queue: queued.append(pk))
    client.force_login(admin_user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/author/modules/{MODULE}/rungs/kv-cache-size/check")
    assert response.status_code == 302 and len(queued) == 1
    draft = RungDraft.objects.get(slug="kv-cache-size")
    assert draft.checks.get().content_hash == Rung.objects.get(slug="kv-cache-size").current_version.content_hash  # type: ignore[union-attr]


def test_the_csv_defuses_spreadsheet_formulas_in_usernames(catalog, admin_user, client, django_user_model):
    sneaky = django_user_model.objects.create_user(username="=cmd", password="x-long-password-1")
    Progress.objects.create(user=sneaky, rung=Rung.objects.get(slug="kv-cache-size"), attempts=1, best_outcome="failed")
    client.force_login(admin_user)
    body = client.get(f"/author/modules/{MODULE}/progress.csv").content.decode()
    assert "\n'=cmd," in body
