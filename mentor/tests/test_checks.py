from __future__ import annotations

from mentor.checks import check_mentor_settings
from mentor.llm import completions_path


def test_no_model_configured_is_fine(settings):
    settings.MENTOR_LLM_URL = ""
    assert check_mentor_settings() == []


def test_a_model_url_that_cannot_work_is_reported_at_start_up(settings):
    settings.MENTOR_LLM_URL = "ftp://example.org"
    settings.MENTOR_LLM_MODEL = ""
    assert {error.id for error in check_mentor_settings()} == {"mentor.E001", "mentor.E002"}


def test_the_completions_path_accepts_a_base_url_with_or_without_v1():
    assert completions_path("http://127.0.0.1:8000/v1") == ("http", "127.0.0.1", 8000, "/v1/chat/completions")
    assert completions_path("http://127.0.0.1:8000/") == ("http", "127.0.0.1", 8000, "/v1/chat/completions")
    assert completions_path("https://llm.example.org/proxy/v1/") == ("https", "llm.example.org", None, "/proxy/v1/chat/completions")
