"""Authoring services: drafts, Checks in the real sandbox, publishing.

A draft holds work in progress; a Check runs ``validate_rung`` over a
snapshot of the draft's files on a worker; publishing turns the draft into
a new immutable RungVersion, and only when the latest Check passed on
exactly the draft's current content and its hidden tests killed at least
MUTATION_MIN_SCORE of the reference's mutants (the mutation gate).
"""

from __future__ import annotations

import hashlib
import json
import logging
import statistics
import time
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.runners import default_runner
from core.types import User
from core.write_guard import outside_write_transaction
from exercises.exceptions import CatalogError
from exercises.loader import RungFiles
from exercises.models import Module, Rung, RungVersion
from exercises.services import publish_rung_version
from exercises.strength import record_strength, strength_from_summary
from exercises.validation import RungSource, validate_rung
from grader import lifecycle
from grader.constants import Kind, Status
from sandbox.interface import Runner

from . import messages
from .exceptions import AuthoringError, CheckRefused, PublishRefused
from .models import RungCheck, RungDraft
from .problems import by_field as problems_by_field
from .problems import describe_all as describe_problems
from .problems import sentence as problem_sentence
from .transfer import draft_speed, read_rung_files, rung_files

log = logging.getLogger(__name__)

# Seconds of a Check's time kept for storing its report after the mutants.
CHECK_REPORT_MARGIN_S = 30


def draft_from_version(module: Module, rung: Rung) -> RungDraft:
    """An unsaved draft holding the rung's published content (saved on the first edit)."""
    version = rung.current_version
    draft = RungDraft(module=module, rung=rung, base_version=version, slug=rung.slug, order=rung.order)
    if version is not None:
        for name in ("title", "summary", "minutes", "difficulty", "gpu", "limits", "instructions_md", "starter_code",
                     "reference_code", "visible_tests", "hidden_tests", "hidden_test_meta", "wrong_solutions", "equivalent_mutants", "hints",
                     "alternatives", "domain"):
            setattr(draft, name, getattr(version, name))
        # The speed section and its files, without the job's payload the version keeps beside them (issue 60).
        draft.speed = draft_speed(version.speed)
    return draft


def get_draft(module: Module, slug: str) -> RungDraft | None:
    """The module's draft for ``slug``, else an unsaved one from the published rung, else None."""
    draft = RungDraft.objects.filter(module=module, slug=slug).select_related("rung__current_version", "base_version").first()
    if draft is not None:
        return draft
    rung = Rung.objects.filter(module=module, slug=slug).select_related("current_version").first()
    if rung is None:
        return None
    return draft_from_version(module, rung)


def create_draft(*, module: Module, slug: str, title: str, user: User) -> RungDraft:
    if Rung.objects.filter(slug=slug).exists() or RungDraft.objects.filter(slug=slug).exists():
        raise AuthoringError(f"a rung called '{slug}' already exists")
    order = max([0, *module.rungs.values_list("order", flat=True), *module.drafts.values_list("order", flat=True)]) + 1
    return RungDraft.objects.create(
        module=module, slug=slug, title=title, order=min(order, 99), updated_by=user,
        instructions_md=f"# {title}\n\nWhat to build, and the rules.\n",
        starter_code="def solve():\n    raise NotImplementedError\n",
        reference_code="def solve():\n    return 42\n",
        # Tests reach the learner's module through the ``solution`` fixture.
        visible_tests="def test_example(solution):\n    assert solution.solve() == 42\n",
        hidden_tests="def test_edge_case(solution):\n    assert solution.solve() == 42\n",
        hidden_test_meta={"test_edge_case": {"description": "An edge case.", "visibility": "hidden"}},
    )


def draft_files(draft: RungDraft) -> dict[str, str]:
    return rung_files(draft, draft.slug)


@outside_write_transaction
def build_draft(draft: RungDraft) -> RungFiles:
    """The draft as the catalog loader reads it; CatalogError names the problem."""
    return read_rung_files(draft_files(draft), draft.slug, draft.order)


def draft_state(draft: RungDraft) -> dict[str, Any]:
    """Where a draft stands: its problems, its hash, its latest Check and whether it may be published."""
    problems: list[str] = []
    digest = ""
    try:
        digest = build_draft(draft).content_hash
    except CatalogError as exc:
        problems.append(str(exc))
    check = draft.checks.first() if draft.pk else None
    fresh = check is not None and check.content_hash == digest
    published = draft.rung.current_version if draft.rung_id and draft.rung else None
    unchanged = published is not None and published.content_hash == digest
    refusal = mutation_refusal(check) if check is not None and check.status == Status.DONE and check.ok else None
    return {
        "problems": [str(each) for problem in problems for each in describe_problems(problem)],
        "problems_by_field": problems_by_field(problems),
        # The hidden tests and wrong solutions that have a row in the form: their problems are shown there.
        "row_items": {*dict(draft.hidden_test_meta or {}), *dict(draft.wrong_solutions or {})},
        "content_hash": digest,
        "check": check,
        "check_fresh": fresh,
        "mutation": mutation_view(check) if check is not None else None,
        "solutions": solutions_view(check) if check is not None else [],
        "mutation_refusal": refusal,
        "publishable": bool(digest and check is not None and fresh and check.status == Status.DONE and check.ok and not refusal
                            and not unchanged),
        "unchanged": unchanged,
        "published": published,
        "base_outdated": bool(published and draft.base_version_id and published.pk != draft.base_version_id),
    }


def solutions_view(check: RungCheck) -> list[dict[str, Any]]:
    """The Check's wrong solutions and alternatives side by side: what each must do and whether it did."""
    rows = []
    for fact in check.facts or []:
        claim = str(fact.get("claim", ""))
        for folder, must in (("wrong/", "fail a hidden test"), ("alternatives/", "pass every test, three seeds")):
            if claim.startswith(folder):
                rows.append({"name": claim.split(" ", 1)[0], "must": must, "ok": bool(fact.get("ok")), "evidence": fact.get("evidence", "")})
    return rows


def mutation_refusal(check: RungCheck) -> str | None:
    """Why the Check's mutation score forbids publishing (below MUTATION_MIN_SCORE), or None."""
    data = dict(check.mutation or {})
    if "mutation_score" not in data:
        return "the Check measured no mutation score (it ran before mutation testing existed): run the Check again"
    score, floor = float(data["mutation_score"]), float(settings.MUTATION_MIN_SCORE)
    if score >= floor:
        return None
    surviving = len(data.get("surviving") or [])
    return (f"the hidden tests kill too few mutants of the reference: mutation score {score:.3f}, below {floor:g}. "
            f"{surviving} mutant(s) survive: add hidden tests that kill them, or mark those that behave exactly like "
            "the reference as equivalent, with a reason")


def mutation_view(check: RungCheck) -> dict[str, Any] | None:
    """The Check's mutation results for the page: score, threshold, and each surviving mutant's diff as classified lines."""
    data = dict(check.mutation or {})
    if "mutation_score" not in data:
        return None
    surviving = []
    for mutant in data.get("surviving") or []:
        lines = str(mutant.get("diff", "")).splitlines()[2:]  # without the ---/+++ header
        kinds = [("added" if line.startswith("+") else "removed" if line.startswith("-") else "hunk" if line.startswith("@@") else "context")
                 for line in lines]
        surviving.append({**mutant, "lines": [{"kind": kind, "text": line} for kind, line in zip(kinds, lines, strict=True)]})
    return {**data, "surviving": surviving, "threshold": settings.MUTATION_MIN_SCORE,
            "passes": float(data["mutation_score"]) >= float(settings.MUTATION_MIN_SCORE)}


def _check_queue(gpu: str | bool) -> str:
    # A Check is a burst of Submit-sized jobs: it waits with the Submits (or the GPU work).
    return lifecycle.queue_named(Kind.SUBMIT, gpu)


def _check_abandoned() -> dict[str, Any]:
    return {"ok": False, "error": "The Check was interrupted several times (its worker kept stopping); run it again."}


# Checks are claimed, finished and reaped like every graded job (grader.lifecycle).
CHECKS = lifecycle.JobType(
    label="check",
    model=RungCheck,
    task="authoring.check_draft_task",
    queue_of=lambda check: _check_queue(check.draft.gpu),
    hard_limit_s=lambda: float(settings.AUTHORING_CHECK_HARD_TIME_LIMIT_S),
    abandoned=_check_abandoned,
    select_related=("draft",),
)


# A Check's wait before its first one is measured (seconds), and how many recent ones the estimate reads.
CHECK_SECONDS_ESTIMATE = 60
CHECK_SECONDS_SAMPLE = 10
_IN_FLIGHT = (Status.QUEUED, Status.RUNNING)


def files_digest(files: dict[str, str]) -> str:
    """A digest of every file of a rung as a Check reads it (rung.yaml's settings included), whatever its kind."""
    return hashlib.sha256(json.dumps(files, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _same_files(check: RungCheck, digest: str) -> bool:
    return files_digest(dict(check.files or {})) == digest


def _retry_after(in_flight: list[RungCheck]) -> int:
    """Seconds until the oldest of these Checks is likely done (the median of the last Checks' times)."""
    recent = list(RungCheck.objects.filter(status=Status.DONE, seconds__gt=0).order_by("-finished_at").values_list("seconds", flat=True)[:CHECK_SECONDS_SAMPLE])
    typical = statistics.median(recent) if recent else CHECK_SECONDS_ESTIMATE
    elapsed = min((timezone.now() - check.enqueued_at).total_seconds() for check in in_flight)
    return max(5, round(typical - elapsed))


def request_check(draft: RungDraft, user: User) -> RungCheck:
    """Snapshot the draft's files and queue a Check of them (after commit); bounded (issue 55).

    A Check of exactly these files that is still running, or finished
    (without an error of ours), is the answer instead of a new one. Another
    Check of this draft in flight, or as many of this instructor's as
    AUTHORING_MAX_CHECKS_IN_FLIGHT, refuse it: CheckRefused says why and when
    to try again.
    """
    try:
        files = build_draft(draft)
    except CatalogError as exc:
        raise AuthoringError(f"fix this first: {problem_sentence(str(exc))}") from exc
    snapshot = draft_files(draft)
    digest = files_digest(snapshot)
    with transaction.atomic():
        # One request per draft at a time decides (PostgreSQL; SQLite's writer lock already does).
        RungDraft.objects.select_for_update().filter(pk=draft.pk).first()
        in_flight = list(RungCheck.objects.filter(draft=draft, status__in=_IN_FLIGHT).select_related("requested_by"))
        running = next((check for check in in_flight if _same_files(check, digest)), None)
        if running is not None:
            return running
        if in_flight:
            who = in_flight[0].requested_by.get_username() if in_flight[0].requested_by else "someone"
            seconds = _retry_after(in_flight)
            raise CheckRefused(messages.CHECK_IN_FLIGHT_FOR_DRAFT.format(pk=in_flight[0].pk, who=who, seconds=seconds), seconds)
        done = RungCheck.objects.filter(draft=draft, content_hash=files.content_hash, status=Status.DONE, error="")
        reusable = next((check for check in done if _same_files(check, digest)), None)
        if reusable is not None:
            if reusable == draft.checks.first():
                return reusable
            # The latest Check is what the editor shows and publishing reads: a copy of the result becomes it.
            return RungCheck.objects.create(
                draft=draft, content_hash=reusable.content_hash, files=reusable.files, status=Status.DONE, ok=reusable.ok,
                facts=reusable.facts, summary=reusable.summary, mutation=reusable.mutation, seconds=reusable.seconds,
                requested_by=user, started_at=reusable.started_at, finished_at=reusable.finished_at,
            )
        mine = list(RungCheck.objects.filter(requested_by=user, status__in=_IN_FLIGHT))
        limit = settings.AUTHORING_MAX_CHECKS_IN_FLIGHT
        if len(mine) >= limit:
            seconds = _retry_after(mine)
            raise CheckRefused(messages.CHECKS_IN_FLIGHT_FOR_INSTRUCTOR.format(count=len(mine), limit=limit, seconds=seconds), seconds)
        check = RungCheck.objects.create(draft=draft, content_hash=files.content_hash, files=snapshot, requested_by=user)
        lifecycle.enqueue_on_commit(CHECKS, check.pk, _check_queue(files.meta.gpu))
    return check


def run_check(check_id: int, *, runner: Runner | None = None, worker: str = "") -> RungCheck | None:
    """Claim a queued Check, validate its snapshot in the sandbox, store each fact.

    None when there was nothing to claim (a redelivered task) or the claim
    was lost (the reaper gave the Check to another worker).
    """
    # The mutants stop in time for the facts to be stored: a Check that ran
    # out of time says so instead of ending at the task's time limit.
    stop_at = time.monotonic() + settings.AUTHORING_CHECK_SOFT_TIME_LIMIT_S - CHECK_REPORT_MARGIN_S
    claim = lifecycle.claim(CHECKS, check_id, worker)
    if claim is None:
        return None
    check = RungCheck.objects.select_related("draft").get(pk=check_id)
    try:
        files = read_rung_files(check.files, check.draft.slug, check.draft.order)
        report = validate_rung(RungSource.from_files(files), runner or default_runner(), stop_at=stop_at)
    except Exception as exc:  # any failure ends the Check, visibly, instead of leaving it running
        log.exception("check %s failed to run", check_id)
        finished = lifecycle.finish(claim, ok=False, error=f"{type(exc).__name__}: {exc}"[:2000])
    else:
        finished = lifecycle.finish(
            claim,
            ok=report.ok,
            facts=[{"claim": fact.claim, "ok": fact.ok, "evidence": fact.evidence} for fact in report.facts],
            summary=report.summary(),
            mutation=report.mutation.as_dict() if report.mutation is not None else {},
            seconds=report.seconds,
        )
    if not finished:
        return None
    check.refresh_from_db()
    return check


def publish_draft(draft: RungDraft, user: User) -> RungVersion:
    """Make the draft the rung's new current version; refused unless the latest Check passed on this content.

    The draft's files are read and parsed before the transaction (core.write_guard):
    inside it, under the draft's lock, only a draft saved since is refused, and rows written.
    """
    draft = RungDraft.objects.get(pk=draft.pk)
    try:
        files = build_draft(draft)
    except CatalogError as exc:
        raise PublishRefused(problem_sentence(str(exc))) from exc
    return _publish(draft.pk, draft.updated_at, files, user)


@transaction.atomic
def _publish(pk: int, read_at: Any, files: RungFiles, user: User) -> RungVersion:
    draft = RungDraft.objects.select_for_update().get(pk=pk)
    if draft.updated_at != read_at:
        raise PublishRefused("the draft was saved while it was being published: publish it again")
    check = draft.checks.first()
    if check is None:
        raise PublishRefused("run a Check first: publishing needs a passing Check")
    if check.content_hash != files.content_hash:
        raise PublishRefused("the draft changed since its last Check: run the Check again")
    if check.status != Status.DONE:
        raise PublishRefused("the Check has not finished yet")
    if not check.ok:
        raise PublishRefused("the last Check failed: fix the failing facts and check again")
    refusal = mutation_refusal(check)
    if refusal is not None:
        raise PublishRefused(refusal)
    rung = draft.rung
    if rung is None:
        if Rung.objects.filter(slug=draft.slug).exists():
            raise PublishRefused(f"a rung called '{draft.slug}' already exists")
        rung = Rung.objects.create(module=draft.module, slug=draft.slug, order=draft.order)
    elif rung.order != draft.order:
        rung.order = draft.order
        rung.save(update_fields=["order"])
    version = publish_rung_version(rung, files)
    if version is None:
        raise PublishRefused("nothing to publish: the draft equals the published version")
    # What the passing Check measured is what a learner is told a pass means.
    record_strength(version, strength_from_summary(dict(check.summary or {})))
    draft.rung, draft.base_version, draft.updated_by = rung, version, user
    draft.save(update_fields=["rung", "base_version", "updated_by", "updated_at"])
    return version
