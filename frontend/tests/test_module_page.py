"""The module page's parts: header line, lede, ladder header and labels,
Start/Continue, Where next?, Go up a level, in-app sources, the in-place
workspace frames and the workspace's embed switch."""

from __future__ import annotations

import re
from html import escape

import pytest
from django.test import Client

from exercises.models import Module, Rung, RungVersion
from grader.constants import Outcome
from grader.models import Progress, Submission

MODULE_01 = "/modules/inference-and-serving/"
MODULE_02 = "/modules/training-at-scale/"


def _published(slug: str) -> tuple[Rung, RungVersion]:
    rung = Rung.objects.select_related("current_version").get(slug=slug)
    assert rung.current_version is not None
    return rung, rung.current_version


def _solve(user, slug: str) -> None:
    rung, version = _published(slug)
    Progress.objects.create(user=user, rung=rung, best_outcome=Outcome.PASSED, solved_at=version.created_at)


def _labels(page: str) -> list[str]:
    return re.findall(r'<span class="rung-label">([^<]*?) — ', page)


def test_header_line_lede_and_ladder_header_come_from_the_catalog(catalog, client, learner_client, instructor):
    module = Module.objects.get(slug="inference-and-serving")
    page = client.get(MODULE_01).content.decode()
    # Internal ids are for authors; learners see titles (issue 59, item 8).
    for learners_page in (page, learner_client.get(MODULE_01).content.decode()):
        assert "P10.llm-systems-frontier" not in learners_page and "Audience" not in learners_page
    author = Client()
    author.force_login(instructor)
    assert "P10.llm-systems-frontier.01 · Audience: it-ml" in author.get(MODULE_01).content.decode()
    assert f'<p class="lede" id="lede">{escape(module.summary)}</p>' in page
    versions = [_published(rung.slug)[1] for rung in Rung.objects.filter(module=module)]
    minutes = sum(version.minutes for version in versions)
    assert f"{len(versions)} graded rungs · ~{minutes} min" in page
    assert "<strong>Run</strong> checks your code against the visible tests" in page
    assert "<strong>Submit</strong> grades it against hidden tests" in page


def test_rungs_are_numbered_and_the_senior_rung_is_labelled_and_last(catalog, client):
    labels = _labels(client.get(MODULE_01).content.decode())
    assert labels == ["Rung 1", "Rung 2", "Rung 3", "Rung 4", "Rung 5", "Rung 6", "Rung 7", "Senior rung"]
    page = client.get(MODULE_02).content.decode()
    assert _labels(page) == ["Rung 1", "Rung 2", "Rung 3", "Rung 4", "Senior rung"]
    assert page.index("Memory per GPU for training") < page.index("Pipeline schedules: GPipe vs 1F1B")


def test_a_new_learner_is_offered_start_on_the_first_rung(catalog, client, learner_client):
    for who in (client, learner_client):
        page = who.get(MODULE_01).content.decode()
        button = re.search(r'<a class="button primary" id="start-button" href="([^"]+)" data-open="([^"]+)">([^<]+)</a>', page)
        assert button is not None
        assert button.group(1) == "/rungs/kv-cache-size/" and button.group(2) == "kv-cache-size"
        assert button.group(3).startswith("Start: Rung 1 — ")


def test_continue_goes_to_the_next_unsolved_rung(catalog, learner, learner_client):
    _solve(learner, "kv-cache-size")
    page = learner_client.get(MODULE_01).content.decode()
    assert 'data-open="quantization-arithmetic">Continue: Rung 2 — ' in page


def test_an_attempted_rung_is_still_the_next_one(catalog, learner, learner_client):
    rung, version = _published("kv-cache-size")
    Submission.objects.create(user=learner, rung=rung, rung_version=version, kind="run", code="x = 1", status="done", outcome="failed")
    page = learner_client.get(MODULE_01).content.decode()
    assert 'data-open="kv-cache-size">Continue: Rung 1 — ' in page


def test_every_rung_solved_shows_no_start_button(catalog, learner, learner_client):
    for rung in Rung.objects.filter(module__slug="training-at-scale"):
        _solve(learner, rung.slug)
    page = learner_client.get(MODULE_02).content.decode()
    assert "Every rung solved" in page and 'class="button primary" id="start-button"' not in page


def test_where_next_lists_later_modules_and_the_way_up(catalog, client):
    page = client.get(MODULE_01).content.decode()
    where = page[page.index('id="where-next"') :]
    assert "Where next? Later in LLM Systems &amp; Frontier" in where
    assert '<a href="/modules/training-at-scale/">Training at scale</a>' in where
    assert escape(Module.objects.get(slug="training-at-scale").summary) in where
    assert '<a href="/tracks/llm-systems-frontier/" id="up-level">↑ Go up a level: LLM Systems &amp; Frontier</a>' in where
    last = client.get(MODULE_02).content.decode()
    assert "This is the last module of LLM Systems &amp; Frontier so far." in last
    assert 'id="up-level"' in last


def test_in_app_sources_link_inside_the_site(catalog, client):
    page = client.get(MODULE_01).content.decode()
    sources = page[page.index('id="sources"') :]
    assert '<a href="/modules/training-at-scale/">Training at scale</a>' in sources
    back = client.get(MODULE_02).content.decode()
    assert '<a href="/modules/inference-and-serving/">Inference' in back[back.index('id="sources"') :]


def test_an_in_app_source_to_a_module_not_loaded_is_shown_unlinked(catalog, client):
    module = Module.objects.get(slug="inference-and-serving")
    module.sources = [{"kind": "in-app", "title": "Somewhere else", "module": "P99.nowhere.01"}]
    module.save(update_fields=["sources"])
    page = client.get(MODULE_01).content.decode()
    assert "Somewhere else" in page and "P99.nowhere.01" not in page and 'href="/modules/P99' not in page


def test_a_stored_source_address_that_is_not_http_is_shown_unlinked(catalog, client):
    # Rows stored before the catalog refused such addresses: the page must
    # not link them, or one click runs the author's script.
    module = Module.objects.get(slug="inference-and-serving")
    module.sources = [
        {"kind": "paper", "title": "Trap", "url": "javascript:alert(document.cookie)"},
        {"kind": "paper", "title": "Data", "url": "data:text/html,<script>alert(1)</script>"},
        {"kind": "paper", "title": "Fine", "url": "https://example.org/paper"},
    ]
    module.save(update_fields=["sources"])
    page = client.get(MODULE_01).content.decode()
    sources = page[page.index('id="sources"') :]
    assert "javascript:" not in sources and "data:text" not in sources
    assert ", Trap</td>" in sources and '<a href="https://example.org/paper" rel="noopener">, Fine</a>' in sources


def test_ladder_entries_open_the_embedded_workspace_in_place(catalog, learner_client):
    page = learner_client.get(MODULE_02).content.decode()
    for rung in Rung.objects.filter(module__slug="training-at-scale"):
        assert f'aria-controls="frame-{rung.slug}" data-src="/rungs/{rung.slug}/?embed=1">Open here</button>' in page
        assert f'<a class="meta full-page" href="/rungs/{rung.slug}/">Full page ↗</a>' in page
        assert f'<div class="rung-frame" id="frame-{rung.slug}" hidden></div>' in page
    assert "<iframe" not in page  # frames are made on first open, not on page load
    assert "frontend/module.js" in page


def test_a_visitor_is_asked_to_log_in_instead_of_opening_in_place(catalog, client):
    page = client.get(MODULE_02).content.decode()
    assert "Open here" not in page
    assert 'href="/accounts/login/?next=/modules/training-at-scale/"' in page


def test_the_embedded_workspace_has_no_site_chrome_and_may_be_framed_by_the_site(catalog, learner_client):
    full = learner_client.get("/rungs/training-memory/")
    embedded = learner_client.get("/rungs/training-memory/?embed=1")
    assert 'class="topbar"' in full.content.decode()
    body = embedded.content.decode()
    assert 'class="topbar"' not in body and '<body class="embed">' in body
    assert 'id="workspace"' in body and 'id="run-button"' in body
    assert embedded["X-Frame-Options"] == "SAMEORIGIN"


@pytest.mark.parametrize("path", [MODULE_01, MODULE_02])
def test_the_module_pages_stay_cheap(catalog, learner, client, django_assert_max_num_queries, path):
    client.force_login(learner)
    with django_assert_max_num_queries(10):
        assert client.get(path).status_code == 200


def test_the_catalog_and_track_list_both_modules_in_order_with_minutes_and_difficulty(catalog, learner, learner_client):
    _solve(learner, "training-memory")
    for path in ("/", "/tracks/llm-systems-frontier/"):
        page = learner_client.get(path).content.decode()
        first, second = page.index(">Inference &amp; serving</a>"), page.index(">Training at scale</a>")
        assert first < second
        for slug, start in (("inference-and-serving", first), ("training-at-scale", second)):
            versions = [_published(rung.slug)[1] for rung in Rung.objects.filter(module__slug=slug)]
            minutes = sum(version.minutes for version in versions)
            assert f"{len(versions)} rungs · ~{minutes} min · easy to hard" in page[start:]
        assert "1/5 solved" in page[second:]
