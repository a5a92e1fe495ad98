"""A mentor question never holds the database while it is read (issue 55).

The question was searched and read by the calculator inside the transaction
that locked the learner's row, which on SQLite holds the database's one
write lock: a question of 240 digits and 736 spaces backtracked for about a
minute there, and every other learner's draft save and login waited, then
failed with "database is locked". The slow work now comes before the
transaction, and core.write_guard refuses it inside one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from django.test import Client

from core.markdown import render_markdown
from core.write_guard import WorkInWriteTransaction, in_write_transaction, is_guarded
from mentor import llm, search
from mentor.calculators import answer, parse
from mentor.models import Question

PATHOLOGICAL = "kv cache of llama-3-8b " + "1" * 240 + " " * 736 + "x"
# A draft save waits for no one: far above its normal few milliseconds, far
# below the minute the question held the lock (and SQLite's 20 s timeout).
WRITE_BOUND_S = 1.0


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("search", lambda module: search.search(module, "What is a KV cache?")),
        ("calculator", lambda module: answer.calculate(module, "KV cache of Llama-2-7B at 4096 tokens")),
        ("parser", lambda module: parse.parse_question("KV cache of Llama-2-7B at 4096 tokens", ("kv_cache",))),
        ("renderer", lambda module: render_markdown("*hi*")),
    ],
)
def test_the_slow_entry_points_refuse_to_run_inside_a_write_transaction(name: str, call: Callable[[Any], Any], module: Any) -> None:
    call(module)  # outside: fine
    with transaction.atomic():
        assert in_write_transaction()
        with pytest.raises(WorkInWriteTransaction):
            call(module)


def test_the_model_calls_and_the_catalog_readers_are_guarded_too() -> None:
    """Publishing and importing read and parse an author's files before their transactions (issue 55)."""
    from authoring.services import build_draft
    from exercises.loader import read_catalog, read_rung

    assert all(is_guarded(function) for function in (llm.complete, llm.stream, build_draft, read_rung, read_catalog))


@pytest.mark.django_db
def test_the_test_frameworks_own_transaction_does_not_count() -> None:
    assert connection.in_atomic_block
    assert not in_write_transaction()


def _save_drafts_while(busy: threading.Event, client: Client, slug: str) -> list[float]:
    """Save a draft every 50 ms while ``busy`` is set (and at least twice); how long each took."""
    took: list[float] = []
    while busy.is_set() or len(took) < 2:
        started = time.monotonic()
        response = client.post(f"/rungs/{slug}/draft", {"code": f"x = {len(took)}\n"})
        took.append(time.monotonic() - started)
        assert response.status_code == 200, response.content[:300]
        time.sleep(0.05)
    return took


def _ask_while_saving(module: Any, learner: Any, other_learner: Any, question: str) -> tuple[float, list[float]]:
    asker, saver = Client(), Client()
    asker.force_login(learner)
    saver.force_login(other_learner)
    busy = threading.Event()
    busy.set()
    result: dict[str, Any] = {}

    def ask() -> None:
        try:
            started = time.monotonic()
            result["status"] = asker.post("/mentor/ask", {"module": module.slug, "question": question}).status_code
            result["asked_s"] = time.monotonic() - started
        finally:
            busy.clear()
            connection.close()

    thread = threading.Thread(target=ask)
    thread.start()
    try:
        time.sleep(0.1)  # the question is being read when the first save comes
        saves = _save_drafts_while(busy, saver, "kv-cache-size")
    finally:
        thread.join(timeout=120)
    assert result.get("status") == 200, result
    return result["asked_s"], saves


@pytest.mark.sqlite_pass
def test_a_pathological_question_leaves_other_learners_drafts_saving(module: Any, learner: Any, other_learner: Any, transactional_db: Any) -> None:
    asked_s, saves = _ask_while_saving(module, learner, other_learner, PATHOLOGICAL)
    assert asked_s < 2.0
    assert max(saves) < WRITE_BOUND_S, saves


@pytest.mark.sqlite_pass
def test_a_slow_search_holds_no_lock(module: Any, learner: Any, other_learner: Any, transactional_db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the search costs, other learners write meanwhile: it runs before the transaction."""
    real_search = search.search

    def slow_search(*args: Any, **kwargs: Any) -> Any:
        time.sleep(1.5)
        return real_search(*args, **kwargs)

    monkeypatch.setattr("mentor.services.search", slow_search)
    asked_s, saves = _ask_while_saving(module, learner, other_learner, "What is a KV cache?")
    assert asked_s >= 1.5
    assert len(saves) >= 5 and max(saves) < WRITE_BOUND_S, saves
    assert Question.objects.filter(learner=learner).count() == 1
