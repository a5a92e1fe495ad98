"""The API's bodies, as the OpenAPI schema (docs/openapi.json) describes them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Schema


class Error(Schema):
    error: str
    code: str
    retry_after_s: int | None = None


class Me(Schema):
    username: str
    token_name: str
    scope: str
    expires_at: datetime


class ModuleSummary(Schema):
    slug: str
    title: str
    solved: int
    total: int
    url: str


class TrackEntry(Schema):
    slug: str
    title: str
    modules: list[ModuleSummary]


class LadderRung(Schema):
    slug: str
    title: str
    label: str
    state: str
    version: int
    difficulty: str
    minutes: int


class ModuleDetail(Schema):
    slug: str
    title: str
    track: str
    summary: str
    rungs: list[LadderRung]
    url: str


class Deadline(Schema):
    course: str
    assignment: str
    state: str
    sentence: str
    opens_at: datetime
    due_at: datetime
    closes_at: datetime
    extended: bool


class RungDetail(Schema):
    slug: str
    title: str
    module: str
    version: int
    difficulty: str
    minutes: int
    instructions_md: str
    starter_code: str
    # test_visible.py, the grading helpers it imports and a conftest for local runs.
    files: dict[str, str]
    solved: bool
    max_code_bytes: int
    url: str
    deadlines: list[Deadline]


class DraftOut(Schema):
    code: str
    updated_at: datetime


class DraftIn(Schema):
    code: str


class Saved(Schema):
    saved: bool
    updated_at: datetime


class CodeIn(Schema):
    code: str
    # The rung version the code was written against (GET /rungs/{slug} says it).
    version: int
    # A Submit of a speed rung that asks for one: the speed-up predicted, times the baseline's speed.
    prediction: float | None = None


class Accepted(Schema):
    id: int
    status: str
    state_url: str


class HistoryAttempt(Schema):
    id: int
    # The learner's own count of attempts at the rung (1, 2, 3...), as the workspace numbers them.
    number: int
    kind: str
    status: str
    outcome: str
    version: int
    enqueued_at: datetime
    code: str
    passed: int
    total: int
    practice: str
    # A Submit every test passed and the speed phase alone failed: which way, in words ("" otherwise).
    speed: str = ""


class History(Schema):
    attempts: list[HistoryAttempt]
    page: int
    next_page: int | None


class HiddenTestShown(Schema):
    name: str
    description: str
    source: str | None = None


class Reference(Schema):
    reference: str
    hidden_tests: list[HiddenTestShown]
    your_solution: str | None


class CourseRung(Schema):
    slug: str
    title: str
    solved_at: datetime | None
    standing: str


class CourseAssignment(Schema):
    deadline: Deadline
    rungs: list[CourseRung]


class CourseEntry(Schema):
    slug: str
    title: str
    term: str
    time_zone: str
    assignments: list[CourseAssignment]


# A job's state exactly as the workspace polls it (frontend.views.submission_payload).
JobState = dict[str, Any]


class BoardRowOut(Schema):
    rank: int
    # The name the learner chose for boards, "Anonymous learner", or "You".
    name: str
    ratio: float
    you: bool


class SpeedBoardOut(Schema):
    # A GPU's name, else the grading host's CPU model.
    machine: str
    entries: int
    rows: list[BoardRowOut]
    # The caller's own row when it is below the rows shown.
    own: BoardRowOut | None
