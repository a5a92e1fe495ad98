"""Live-update hints: published by the grader, streamed to the owner only, harmless when Redis is down."""

from __future__ import annotations

import threading
import time

import pytest

from frontend import views
from grader import events
from grader.constants import Status


def test_publishing_with_redis_down_logs_and_does_not_raise(settings, caplog):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    events.publish_changed("some-channel")
    assert "not published" in caplog.text


def test_the_stream_answers_503_with_redis_down_so_the_page_polls(settings, learner, learner_client, make_submission):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    submission = make_submission(learner)
    assert learner_client.get(f"/events/{submission.channel}").status_code == 503


@pytest.mark.redis
def test_the_owner_gets_a_changed_event_for_each_hint(settings, redis_url, learner, learner_client, make_submission, monkeypatch):
    settings.REDIS_URL = redis_url
    monkeypatch.setattr(views, "LIVE_EVENTS_MAX_S", 1.5)
    monkeypatch.setattr(views, "LIVE_EVENTS_HEARTBEAT_S", 0.5)
    submission = make_submission(learner, status=Status.RUNNING)
    response = learner_client.get(f"/events/{submission.channel}")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    chunks = iter(response.streaming_content)
    first = next(chunks).decode()
    assert "event: changed" in first  # sent once subscribed, so nothing is missed

    publisher = threading.Timer(0.2, events.publish_changed, args=(submission.channel,))
    publisher.start()
    started = time.monotonic()
    rest = "".join(chunk.decode() for chunk in chunks)  # ends at the stream's max lifetime
    publisher.join()
    assert rest.count("event: changed") == 1
    assert ": heartbeat" in rest
    assert time.monotonic() - started < 5


@pytest.mark.redis
def test_the_stream_of_a_finished_submission_ends_after_one_event(settings, redis_url, learner, learner_client, make_submission):
    settings.REDIS_URL = redis_url
    submission = make_submission(learner)
    started = time.monotonic()
    body = b"".join(learner_client.get(f"/events/{submission.channel}").streaming_content).decode()
    assert body.count("event: changed") == 1
    assert time.monotonic() - started < 2


def test_past_the_stream_cap_the_page_is_told_to_poll(settings, learner, learner_client, make_submission, monkeypatch):
    monkeypatch.setattr(views, "_STREAM_SLOTS", threading.BoundedSemaphore(1))
    views._STREAM_SLOTS.acquire()  # another page holds the only slot
    submission = make_submission(learner)
    response = learner_client.get(f"/events/{submission.channel}")
    assert response.status_code == 503
    assert response["Retry-After"] == "2"
    views._STREAM_SLOTS.release()
    assert views._STREAM_SLOTS.acquire(blocking=False)  # the refusal took no slot
