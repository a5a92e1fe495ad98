"""Typed, strict views of the catalog files (pydantic, unknown keys refused)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from .constants import Difficulty, GpuNeed, TestVisibility, gpu_need

SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
# A mutant's id (exercises.mutation): Cosmic Ray's operator, a hash of the
# change, and a counter when the same change appears twice in one function.
MUTANT_ID_PATTERN = r"^[A-Za-z]+(?:_[A-Za-z]+)*-[0-9a-f]{8}(?:-[0-9]+)?$"
# A rung's hints: how many, and how long each may be.
HINTS_MAX = 5
HINT_MAX_CHARS = 1000


def is_web_address(url: str) -> bool:
    """Whether ``url`` is an absolute http(s) address with a host, safe to put in an href."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc) and url == url.strip()


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TrackMeta(Strict):
    slug: str = Field(pattern=SLUG_PATTERN)
    title: str = Field(min_length=1)
    summary: str = ""
    order: int = Field(default=0, ge=0)


IN_APP_KIND = "in-app"


class Source(Strict):
    """A "Go further" entry: a paper or page (``url``), or, with ``kind: in-app``,
    another module of the catalog named by its ``id`` (``module``)."""

    kind: str = Field(min_length=1)
    title: str = Field(min_length=1)
    authors: str = ""
    year: int | None = None
    url: str | None = None
    module: str | None = None

    @field_validator("url")
    @classmethod
    def _url_is_a_web_address(cls, url: str | None) -> str | None:
        # Pages link it as is: a javascript: or data: address there would run
        # the author's script in the reader's session (an admin's too).
        if url is not None and not is_web_address(url):
            raise ValueError(f"a source's url must be an http:// or https:// address with a host, not {url[:80]!r}")
        return url

    @model_validator(mode="after")
    def _in_app_names_a_module(self) -> Source:
        if self.kind == IN_APP_KIND and not self.module:
            raise ValueError("an in-app source names the module it points at (module: <module id>)")
        if self.kind != IN_APP_KIND and self.module:
            raise ValueError(f"only an in-app source names a module (this one is kind '{self.kind}')")
        return self


class ModuleMeta(Strict):
    id: str = Field(min_length=1)
    slug: str = Field(pattern=SLUG_PATTERN)
    title: str = Field(min_length=1)
    order: int = Field(default=0, ge=0)
    audience: str = ""
    depth: str = ""
    summary: str = ""
    why_it_matters: str = ""
    one_liners: list[str] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    next_module: str | None = None


class Limits(Strict):
    """Per-rung sandbox limits; defaults are the safe ones."""

    time_s: int = Field(default=30, ge=1, le=600)
    memory_mb: int = Field(default=1024, ge=64, le=65536)
    cpus: float = Field(default=1.0, gt=0, le=16)
    pids: int = Field(default=128, ge=16, le=4096)
    tmpfs_mb: int = Field(default=64, ge=1, le=4096)
    output_kb: int = Field(default=1024, ge=1, le=65536)


class HiddenTest(Strict):
    description: str = Field(min_length=1, max_length=300)
    visibility: TestVisibility = TestVisibility.HIDDEN


class EquivalentMutant(Strict):
    """A mutant of the reference that behaves exactly like it: no test can kill it."""

    id: str = Field(pattern=MUTANT_ID_PATTERN)
    reason: str = Field(min_length=1, max_length=500)


class RungMeta(Strict):
    slug: str = Field(pattern=SLUG_PATTERN)
    title: str = Field(min_length=1, max_length=200)
    minutes: int = Field(ge=1, le=240)
    difficulty: Difficulty
    summary: str = Field(default="", max_length=300)
    limits: Limits = Field(default_factory=Limits)
    # Ladder placement, not content: a senior rung is labelled "Senior rung"
    # and listed after the others; it does not enter the content hash.
    senior: bool = False
    # no | preferred | required; YAML's false/true (and bare no) still read as no/required.
    gpu: GpuNeed = GpuNeed.NO
    hidden_tests: dict[str, HiddenTest]
    wrong_solutions: dict[str, str] = Field(default_factory=dict)
    # Surviving mutants the author proved equivalent; the mutation score leaves them out.
    equivalent_mutants: list[EquivalentMutant] = Field(default_factory=list)
    # Hints a learner reveals one at a time, in this order (Markdown each). Never graded.
    hints: list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=HINT_MAX_CHARS)]] = Field(
        default_factory=list, max_length=HINTS_MAX
    )

    @field_validator("gpu", mode="before")
    @classmethod
    def _gpu_need(cls, value: object) -> GpuNeed:
        try:
            return gpu_need(value)
        except ValueError as exc:
            raise ValueError(f"gpu must be one of {', '.join(GpuNeed.values)}, not {value!r}") from exc

    @field_validator("equivalent_mutants")
    @classmethod
    def _unique_mutant_ids(cls, value: list[EquivalentMutant]) -> list[EquivalentMutant]:
        ids = [mutant.id for mutant in value]
        repeated = sorted({mutant_id for mutant_id in ids if ids.count(mutant_id) > 1})
        if repeated:
            raise ValueError(f"listed more than once: {', '.join(repeated)}")
        return value
