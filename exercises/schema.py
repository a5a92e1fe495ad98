"""Typed, strict views of the catalog files (pydantic, unknown keys refused)."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from .constants import MIN_ALTERNATIVES, Difficulty, GpuNeed, TestVisibility, gpu_need
from .domain_guard import NAMED_DOMAINS, TYPE_NAMES

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


# A module's authored explanations (explanations.yaml, beside module.yaml):
# the mentor answers a concept question with one of them before any passage.
EXPLANATIONS_MAX = 100
EXPLANATION_MAX_CHARS = 3000
_Phrase = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300)]


class Explanation(Strict):
    """One explanation: the questions it answers (in learners' words), extra search words, the answer in Markdown."""

    id: str = Field(pattern=SLUG_PATTERN, max_length=80)
    questions: list[_Phrase] = Field(min_length=1, max_length=20)
    keywords: list[_Phrase] = Field(default_factory=list, max_length=40)
    answer: str = Field(min_length=1, max_length=EXPLANATION_MAX_CHARS)
    sources: list[Source] = Field(default_factory=list, max_length=10)

    @field_validator("answer")
    @classmethod
    def _answer_has_words(cls, answer: str) -> str:
        if not answer.strip():
            raise ValueError("the answer is empty")
        return answer


class ExplanationsFile(Strict):
    explanations: list[Explanation] = Field(default_factory=list, max_length=EXPLANATIONS_MAX)

    @field_validator("explanations")
    @classmethod
    def _ids_are_unique(cls, explanations: list[Explanation]) -> list[Explanation]:
        seen: dict[str, int] = {}
        for n, explanation in enumerate(explanations):
            if explanation.id in seen:
                raise ValueError(f"explanation {n} has the id '{explanation.id}' of explanation {seen[explanation.id]} (ids are unique)")
            seen[explanation.id] = n
        return explanations


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


# Entry points a domain names: a function, a class (its constructor) or Class.method.
ENTRY_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?$"
TENSOR_DTYPES = (
    "float64", "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "complex64", "complex128",
    "int64", "int32", "int16", "int8", "uint8", "bool",
)


def _builtin_exception(name: str) -> str:
    import builtins

    found = getattr(builtins, name, None)
    if not (isinstance(found, type) and issubclass(found, Exception)):
        raise ValueError(f"{name!r} is not a builtin exception (ValueError, TypeError, KeyError...)")
    return name


def _python_expression(text: str) -> str:
    try:
        compile(text, "<domain>", "eval")
    except SyntaxError as exc:
        raise ValueError(f"not a Python expression: {text!r} ({exc.msg})") from exc
    return text


class ArgDomain(Strict):
    """The documented values of one argument (docs/authoring.md, "Documented domain")."""

    type: str | list[str] = "any"
    min: int | float | None = None
    max: int | float | None = None
    above: int | float | None = None
    below: int | float | None = None
    finite: bool = False
    choices: list[Any] | None = None
    dtype: list[str] | None = None
    shape: list[int | str] | None = None
    ndim: int | None = Field(default=None, ge=0)
    items: ArgDomain | None = None
    min_len: int | None = Field(default=None, ge=0)
    max_len: int | None = Field(default=None, ge=0)
    fields: dict[str, ArgDomain] | None = None
    optional_fields: dict[str, ArgDomain] | None = None
    other_fields: bool = False
    where: str | None = None
    generator: str | None = None
    # Every value outside this spec is a documented bad input raising this exception.
    otherwise: str | None = None
    # Documented bad values, when the rules name only some.
    bad: list[BadInput] | None = None

    @field_validator("type")
    @classmethod
    def _known_types(cls, value: str | list[str]) -> str | list[str]:
        for name in [value] if isinstance(value, str) else value:
            if name not in TYPE_NAMES:
                raise ValueError(f"unknown type {name!r} (known: {', '.join(TYPE_NAMES)})")
        return value

    @field_validator("dtype")
    @classmethod
    def _known_dtypes(cls, value: list[str] | None) -> list[str] | None:
        for name in value or []:
            if name not in TENSOR_DTYPES:
                raise ValueError(f"unknown dtype {name!r} (known: {', '.join(TENSOR_DTYPES)})")
        return value

    @field_validator("where")
    @classmethod
    def _where_compiles(cls, value: str | None) -> str | None:
        return None if value is None else _python_expression(value)

    @field_validator("generator")
    @classmethod
    def _named_domain(cls, value: str | None) -> str | None:
        if value is not None and value not in NAMED_DOMAINS:
            raise ValueError(f"unknown named domain {value!r} (known: {', '.join(sorted(NAMED_DOMAINS))})")
        return value

    @field_validator("otherwise")
    @classmethod
    def _otherwise_is_an_exception(cls, value: str | None) -> str | None:
        return None if value is None else _builtin_exception(value)


class BadInput(ArgDomain):
    """Documented bad values of an argument and the exception the rules give them."""

    raises: str

    @field_validator("raises")
    @classmethod
    def _raises_an_exception(cls, value: str) -> str:
        return _builtin_exception(value)


ArgDomain.model_rebuild()  # it names BadInput, defined after it


class Requirement(Strict):
    """A check across arguments (``hidden_size % num_heads == 0``); ``raises`` when the rules say what a call breaking it raises."""

    check: str = Field(min_length=1)
    raises: str | None = None
    rule: str = ""

    @field_validator("check")
    @classmethod
    def _check_compiles(cls, value: str) -> str:
        return _python_expression(value)

    @field_validator("raises")
    @classmethod
    def _raises_an_exception(cls, value: str | None) -> str | None:
        return None if value is None else _builtin_exception(value)


class EntryDomain(Strict):
    """The documented inputs of one entry point the tests call."""

    args: dict[str, ArgDomain] = Field(default_factory=dict)
    requires: list[Requirement] = Field(default_factory=list)


# The files a speed section names, in the rung's folder (issue 60).
SPEED_INPUTS_FILE = "speed_inputs.py"
SPEED_BASELINE_FILE = "baseline.py"
SpeedSizeValue = int | float | str | bool


class SpeedTarget(Strict):
    """How fast the learner's code must be: ``speedup`` times the baseline's
    speed at least (a naive baseline), or ``within`` that many times the
    reference's time at most (the reference as baseline). Exactly one."""

    speedup: float | None = Field(default=None, gt=0, le=1000)
    within: float | None = Field(default=None, ge=1, le=100)

    @model_validator(mode="after")
    def _exactly_one(self) -> SpeedTarget:
        if (self.speedup is None) == (self.within is None):
            raise ValueError("give exactly one of speedup (times the baseline's speed) and within (times the reference's time)")
        return self

    @property
    def min_ratio(self) -> float:
        """The least baseline-time / learner-time ratio that passes."""
        return self.speedup if self.speedup is not None else 1 / float(self.within or 1)


class Speed(Strict):
    """A speed-graded rung: timed after every hidden test passed (docs/authoring.md, "Speed rungs")."""

    # The function of the learner's module to time.
    entry: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")
    # Keyword arguments of speed_inputs.py's make_inputs(rng, **size), one dict per size; rounds cycle through them.
    sizes: list[dict[Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,49}$")], SpeedSizeValue]] = Field(min_length=1, max_length=8)
    # "reference": the rung's reference.py; "naive": baseline.py beside it (never shown to the learner).
    baseline: Literal["reference", "naive"]
    target: SpeedTarget
    # Seconds the measurement may take after the tests passed; past it the verdict is ambiguous.
    budget_s: int = Field(default=20, ge=2, le=120)
    # Ask the learner to predict the speed-up before Submit (issue 60, item 8): the result shows
    # the prediction beside the measurement. Absent: not asked.
    predict: Literal["optional", "required"] | None = None

    @model_validator(mode="after")
    def _target_fits_the_baseline(self) -> Speed:
        if self.baseline == "naive" and self.target.within is not None:
            raise ValueError("target.within compares with the reference: use baseline: reference, or target.speedup")
        return self


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
    # Independent correct solutions (alternatives/<name>.py -> how it differs from the
    # reference): each must pass every visible and hidden test. validate_exercises
    # requires at least MIN_ALTERNATIVES of them.
    alternatives: dict[str, str] = Field(default_factory=dict, description=f"at least {MIN_ALTERNATIVES} independent correct solutions")
    # Entry point ("fn", "Class", "Class.method") -> the inputs the instructions define;
    # Check and validate_exercises refuse a test's call outside it (exercises.domain_guard).
    domain: dict[Annotated[str, StringConstraints(pattern=ENTRY_PATTERN)], EntryDomain] = Field(default_factory=dict)
    # Surviving mutants the author proved equivalent; the mutation score leaves them out.
    equivalent_mutants: list[EquivalentMutant] = Field(default_factory=list)
    # A speed-graded rung (issue 60): what to time after the hidden tests passed.
    speed: Speed | None = None
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


def domain_data(meta: RungMeta) -> dict[str, Any]:
    """``meta.domain`` as plain data: what the guard reads, a draft stores and an export writes."""
    return {key: entry.model_dump(mode="json", exclude_defaults=True) for key, entry in meta.domain.items()}
