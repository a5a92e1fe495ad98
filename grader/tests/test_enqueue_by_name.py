"""Jobs are enqueued by task name: every name a JobType sends must be a registered task."""

from __future__ import annotations

from grader import lifecycle


def test_every_job_type_names_a_registered_task():
    from config.celery import app

    app.loader.import_default_modules()
    labels = {job_type.label: job_type.task for job_type in lifecycle.job_types()}
    assert set(labels) == {"submission", "rejudge", "check", "lti_score"}
    assert {task for task in labels.values() if task not in app.tasks} == set()


def test_eager_mode_runs_the_task_in_process(catalog, learner, monkeypatch, django_capture_on_commit_callbacks):
    from config.celery import app
    from exercises.models import Rung
    from grader import services
    from grader.constants import Kind, Status
    from grader.models import Submission
    from sandbox.testing import FakeRunner

    runner = FakeRunner()
    monkeypatch.setattr(services, "default_runner", lambda: runner)
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            submission = services.submit_solution(user=learner, rung=Rung.objects.get(slug="kv-cache-size"), kind=Kind.RUN, code="x = 1\n")
    finally:
        app.conf.task_always_eager = eager
    assert Submission.objects.get(pk=submission.pk).status == Status.DONE
    assert len(runner.jobs) == 1



def test_sending_a_job_subscribes_to_no_result(redis_url):
    """Nobody waits for a task's result (the row is the result): sending a
    job must not subscribe the sending process to its result channel.

    Celery subscribes to a sent task's result unless told the result is
    ignored, and unsubscribes when the returned handle is collected: two
    Redis round trips more on every Run and Submit, for nothing."""
    import redis

    from config.celery import app

    def subscribes(client: redis.Redis) -> int:
        return int(client.info("commandstats").get("cmdstat_subscribe", {}).get("calls", 0))

    eager = app.conf.task_always_eager
    app.conf.task_always_eager = False
    client = redis.Redis.from_url(redis_url)
    try:
        before = subscribes(client)
        for job_type in lifecycle.job_types():
            lifecycle.enqueue(job_type, 10**9, "maintenance")
        assert subscribes(client) == before
        # The messages themselves were sent.
        assert client.llen("maintenance") == len(lifecycle.job_types())
    finally:
        app.conf.task_always_eager = eager
        client.delete("maintenance")
        client.close()
