"""Forms of the authoring pages: a module's metadata, a rung draft and its rows."""

from __future__ import annotations

import re
from typing import Any

import yaml
from django import forms
from django.core.validators import MaxLengthValidator, MaxValueValidator, MinValueValidator, RegexValidator
from pydantic import ValidationError

from core.constants import MARKDOWN_MAX_CHARS, ContentRole
from exercises.constants import GpuNeed, TestVisibility
from exercises.loader import parse_yaml
from exercises.models import Module, Rung, Track
from exercises.schema import (
    ENTRY_PATTERN,
    HINT_MAX_CHARS,
    HINTS_MAX,
    SLUG_PATTERN,
    SPEED_BASELINE_FILE,
    SPEED_INPUTS_FILE,
    EntryDomain,
    EquivalentMutant,
    Limits,
    Source,
    Speed,
)
from exercises.services import external_id_taken

from .messages import EXTERNAL_ID_TAKEN
from .models import RungDraft
from .transfer import draft_speed


def _authors_yaml(text: str, empty: Any) -> Any:
    """A YAML field's value (``empty`` when blank); a form error for anything PyYAML refuses or cannot read."""
    if not text.strip():
        return empty
    try:
        return parse_yaml(text)
    except ValueError as exc:
        raise forms.ValidationError(f"Not valid YAML: {str(exc).removeprefix('invalid YAML: ')}") from exc

_CODE = forms.Textarea(attrs={"class": "code", "rows": 14, "spellcheck": "false"})
_LIMIT_FIELDS: dict[str, tuple[str, type[forms.Field], dict[str, Any]]] = {
    "time_s": ("Time limit (s)", forms.IntegerField, {"min_value": 1, "max_value": 600}),
    "memory_mb": ("Memory (MB)", forms.IntegerField, {"min_value": 64, "max_value": 65536}),
    "cpus": ("CPUs", forms.FloatField, {"min_value": 0.1, "max_value": 16}),
    "pids": ("Processes", forms.IntegerField, {"min_value": 16, "max_value": 4096}),
    "tmpfs_mb": ("Scratch disk (MB)", forms.IntegerField, {"min_value": 1, "max_value": 4096}),
    "output_kb": ("Output (KB)", forms.IntegerField, {"min_value": 1, "max_value": 65536}),
}


def _unix_newlines(cleaned: dict[str, Any]) -> dict[str, Any]:
    # Browsers send a textarea's line breaks as CRLF; the catalog files use LF.
    return {key: value.replace("\r\n", "\n") if isinstance(value, str) else value for key, value in cleaned.items()}


MARKDOWN_TOO_LONG = (f"At most {MARKDOWN_MAX_CHARS:,} characters of Markdown (this has %(show_value)s): "
                     "split it into sections, or move the long part to a page it links to.")


def _cap_markdown(field: forms.Field) -> None:
    """A Markdown field takes at most MARKDOWN_MAX_CHARS: pages render it for every
    learner, and the renderer is timed at that length (issue 55)."""
    assert isinstance(field, forms.CharField)
    field.max_length = MARKDOWN_MAX_CHARS
    field.validators.append(MaxLengthValidator(MARKDOWN_MAX_CHARS, message=MARKDOWN_TOO_LONG))
    field.help_text = f"{field.help_text} At most {MARKDOWN_MAX_CHARS:,} characters.".strip()


class ModuleForm(forms.ModelForm[Module]):
    one_liners_text = forms.CharField(label="One-liners (one per line)", widget=forms.Textarea(attrs={"rows": 4}), required=False)
    sources_yaml = forms.CharField(
        label="Sources (YAML list)", required=False, widget=forms.Textarea(attrs={"rows": 5, "class": "code-plain", "spellcheck": "false"}),
        help_text="e.g. - {kind: paper, title: Attention Is All You Need, authors: Vaswani et al., year: 2017, url: https://arxiv.org/abs/1706.03762}",
    )

    class Meta:
        model = Module
        fields = ["track", "slug", "external_id", "title", "order", "audience", "depth", "summary", "why_it_matters",
                  "concept_md", "worked_example_md", "reference_md", "next_module_slug"]
        widgets = {
            "summary": forms.Textarea(attrs={"rows": 2}),
            "why_it_matters": forms.Textarea(attrs={"rows": 2}),
            "concept_md": forms.Textarea(attrs={"rows": 8, "class": "markdown"}),
            "worked_example_md": forms.Textarea(attrs={"rows": 8, "class": "markdown"}),
            "reference_md": forms.Textarea(attrs={"rows": 6, "class": "markdown"}),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        track_field = self.fields["track"]
        assert isinstance(track_field, forms.ModelChoiceField)
        track_field.queryset = Track.objects.all()
        # The catalog's slug rule (lower-case words and hyphens), stricter than SlugField's.
        self.fields["slug"].validators.append(RegexValidator(SLUG_PATTERN, "Lower-case letters, digits and single hyphens, e.g. kv-cache."))
        self.fields["external_id"].required = True
        for name in ("concept_md", "worked_example_md", "reference_md"):
            # Markdown files are kept byte for byte (a trailing newline is content).
            self.fields[name].strip = False  # type: ignore[attr-defined]
            _cap_markdown(self.fields[name])
        if self.instance.pk:
            # The slug names the module's folder and URLs: fixed once made.
            self.fields["slug"].disabled = True
            self.fields["one_liners_text"].initial = "\n".join(self.instance.one_liners)
            sources = [{key: value for key, value in dict(source).items() if value is not None} for source in self.instance.sources]
            self.fields["sources_yaml"].initial = yaml.safe_dump(sources, sort_keys=False, allow_unicode=True, width=4096) if sources else ""

    def clean_external_id(self) -> str:
        """A catalog id names one module: "Where next" links follow it, so a second module may not take it."""
        external_id = str(self.cleaned_data.get("external_id", "")).strip()
        taken = external_id_taken(external_id, exclude_slug=self.instance.slug if self.instance.pk else None)
        if taken is not None:
            raise forms.ValidationError(EXTERNAL_ID_TAKEN.format(external_id=external_id, slug=taken))
        return external_id

    def clean_sources_yaml(self) -> list[dict[str, Any]]:
        """The same checks as module.yaml's ``sources`` key (exercises.schema.Source)."""
        text = self.cleaned_data.get("sources_yaml", "")
        data = _authors_yaml(text, [])
        if not isinstance(data, list):
            raise forms.ValidationError("Expected a list of sources (lines starting with '- ').")
        sources = []
        for index, item in enumerate(data, start=1):
            try:
                sources.append(Source.model_validate(item).model_dump(mode="json"))
            except ValidationError as exc:
                problems = "; ".join(f"key '{'.'.join(str(p) for p in err['loc'])}': {err['msg']}" for err in exc.errors())
                raise forms.ValidationError(f"source {index}: {problems}") from exc
        return sources

    def clean_gpu(self) -> str:
        return str(self.cleaned_data.get("gpu") or GpuNeed.NO)

    def clean(self) -> dict[str, Any]:
        self.cleaned_data = _unix_newlines(super().clean() or {})
        return self.cleaned_data

    def save(self, commit: bool = True) -> Module:
        self.instance.one_liners = [line.strip() for line in self.cleaned_data.get("one_liners_text", "").splitlines() if line.strip()]
        self.instance.sources = self.cleaned_data.get("sources_yaml") or []
        return super().save(commit)


class NewRungForm(forms.Form):
    slug = forms.RegexField(regex=SLUG_PATTERN, max_length=50, help_text="Lower-case words joined by hyphens, e.g. kv-cache-size.")
    title = forms.CharField(max_length=200)

    def clean_slug(self) -> str:
        slug: str = self.cleaned_data["slug"]
        if Rung.objects.filter(slug=slug).exists() or RungDraft.objects.filter(slug=slug).exists():
            raise forms.ValidationError("A rung with this slug already exists.")
        return slug


HINT_SEPARATOR = "---"


def split_hints(text: str) -> list[str]:
    """Hints written in one box, separated by lines holding only ``---``; empty ones dropped."""
    hints: list[list[str]] = [[]]
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.strip() == HINT_SEPARATOR:
            hints.append([])
        else:
            hints[-1].append(line)
    return [joined for joined in ("\n".join(lines).strip() for lines in hints) if joined]


def join_hints(hints: list[str]) -> str:
    return f"\n{HINT_SEPARATOR}\n".join(hints)


class RungDraftForm(forms.ModelForm[RungDraft]):
    """The draft's own fields plus the limits (a JSON field, edited one by one).

    ``revision`` is the draft's ``updated_at`` when the page was opened: a
    save over a newer revision (a co-owner saved meanwhile) is refused once,
    showing the author their own edits, so nobody's work is lost silently.
    """

    revision = forms.CharField(required=False, widget=forms.HiddenInput)
    equivalent_mutants_yaml = forms.CharField(
        label="Equivalent mutants (YAML list)", required=False,
        widget=forms.Textarea(attrs={"rows": 3, "class": "code-plain", "spellcheck": "false"}),
        help_text="Surviving mutants that behave exactly like the reference, e.g. - {id: AddNot-1a2b3c4d, reason: the branch cannot be reached}",
    )

    domain_yaml = forms.CharField(
        label="Documented domain (YAML)", required=False,
        widget=forms.Textarea(attrs={"rows": 8, "class": "code-plain", "spellcheck": "false"}),
        help_text="For each entry point the tests call (a function, a class or Class.method): the inputs the instructions define and the documented bad inputs, "
                  "e.g. kv_bytes: {args: {n: {type: int, min: 1, otherwise: ValueError}}}. See the authoring guide, \"Documented domain\".",
    )

    # A speed-graded rung (issue 60): rung.yaml's speed section and the two files it names. Hidden
    # material: the editor is a content role's page (learners and course staff never open it).
    speed_yaml = forms.CharField(
        label="Speed section (YAML)", required=False,
        widget=forms.Textarea(attrs={"rows": 7, "class": "code-plain", "spellcheck": "false"}),
        help_text="Empty for a rung graded on correctness alone. e.g. entry: gather_kv, sizes: [{batch: 32, max_len: 2048}], "
                  "baseline: naive (or reference), target: {speedup: 1.5} (or {within: 1.25} with the reference), budget_s: 20. "
                  "See the authoring guide, \"Speed rungs\".",
    )
    speed_inputs_code = forms.CharField(
        label=f"Speed inputs ({SPEED_INPUTS_FILE})", required=False, strip=False, widget=_CODE,
        help_text="make_inputs(rng, **size) returns the positional arguments of one timed call; check(got, expected) is optional.",
    )
    speed_baseline_code = forms.CharField(
        label=f"Baseline ({SPEED_BASELINE_FILE})", required=False, strip=False, widget=_CODE,
        help_text="For baseline: naive only: a correct, slow implementation of the entry point. Learners never see it.",
    )

    hints_text = forms.CharField(
        label="Hints, in order (Markdown)", required=False, strip=False,
        widget=forms.Textarea(attrs={"rows": 8, "class": "markdown", "spellcheck": "true"}),
        help_text=f"Learners reveal them one at a time. Separate hints with a line holding only {HINT_SEPARATOR}. "
                  f"At most {HINTS_MAX}, each up to {HINT_MAX_CHARS} characters. The first should not give the answer away.",
    )

    class Meta:
        model = RungDraft
        fields = ["title", "summary", "order", "minutes", "difficulty", "gpu", "instructions_md", "starter_code",
                  "reference_code", "visible_tests", "hidden_tests"]
        widgets = {
            "instructions_md": forms.Textarea(attrs={"rows": 16, "class": "markdown", "spellcheck": "true"}),
            "starter_code": _CODE,
            "reference_code": _CODE,
            "visible_tests": _CODE,
            "hidden_tests": _CODE,
            "summary": forms.TextInput(),
        }
        labels = {"gpu": "GPU", "instructions_md": "Instructions (Markdown, math with $...$)"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, low, high in (("order", 1, 99), ("minutes", 1, 240)):
            number = self.fields[name]
            assert isinstance(number, forms.IntegerField)
            number.min_value, number.max_value = low, high
            number.validators += [MinValueValidator(low), MaxValueValidator(high)]
            number.widget.attrs.update({"min": low, "max": high})
        for name in ("instructions_md", "starter_code", "reference_code", "visible_tests", "hidden_tests"):
            # Code and Markdown are kept byte for byte (a trailing newline is content).
            self.fields[name].strip = False  # type: ignore[attr-defined]
            self.fields[name].required = False
        _cap_markdown(self.fields["instructions_md"])
        # A form that leaves the GPU choice out (a script, an old page) means "no GPU".
        self.fields["gpu"].required = False
        self.fields["revision"].initial = self._current_revision()
        marked = [dict(item) for item in self.instance.equivalent_mutants or []]
        self.fields["equivalent_mutants_yaml"].initial = yaml.safe_dump(marked, sort_keys=False, allow_unicode=True, width=4096) if marked else ""
        self.fields["hints_text"].initial = join_hints(list(self.instance.hints or []))
        domain = dict(self.instance.domain or {})
        self.fields["domain_yaml"].initial = yaml.safe_dump(domain, sort_keys=False, allow_unicode=True, width=4096) if domain else ""
        speed = dict(self.instance.speed or {})
        section, speed_files = dict(speed.get("section") or {}), dict(speed.get("files") or {})
        self.fields["speed_yaml"].initial = yaml.safe_dump(section, sort_keys=False, allow_unicode=True, width=4096) if section else ""
        self.fields["speed_inputs_code"].initial = speed_files.get(SPEED_INPUTS_FILE, "")
        self.fields["speed_baseline_code"].initial = speed_files.get(SPEED_BASELINE_FILE, "")
        current = {**Limits().model_dump(), **dict(self.instance.limits or {})}
        for name, (label, field_class, options) in _LIMIT_FIELDS.items():
            self.fields[f"limit_{name}"] = field_class(label=label, initial=current[name], **options)

    def clean(self) -> dict[str, Any]:
        self.cleaned_data = _unix_newlines(super().clean() or {})
        return self.cleaned_data

    def clean_equivalent_mutants_yaml(self) -> list[dict[str, Any]]:
        """The same checks as rung.yaml's ``equivalent_mutants`` key (exercises.schema.EquivalentMutant)."""
        text = self.cleaned_data.get("equivalent_mutants_yaml", "")
        data = _authors_yaml(text, [])
        if not isinstance(data, list):
            raise forms.ValidationError("Expected a list of mutants (lines starting with '- ').")
        marked = []
        for index, item in enumerate(data, start=1):
            try:
                marked.append(EquivalentMutant.model_validate(item).model_dump(mode="json"))
            except ValidationError as exc:
                problems = "; ".join(f"key '{'.'.join(str(p) for p in err['loc'])}': {err['msg']}" for err in exc.errors())
                raise forms.ValidationError(f"mutant {index}: {problems}") from exc
        ids = [item["id"] for item in marked]
        if len(set(ids)) != len(ids):
            raise forms.ValidationError("A mutant is listed more than once.")
        return marked

    def clean_domain_yaml(self) -> dict[str, Any]:
        """The same checks as rung.yaml's ``domain`` key (exercises.schema.EntryDomain per entry point)."""
        text = self.cleaned_data.get("domain_yaml", "")
        data = _authors_yaml(text, {})
        if not isinstance(data, dict):
            raise forms.ValidationError("Expected a mapping: entry point (fn, Class or Class.method) -> {args: ..., requires: ...}.")
        domain: dict[str, Any] = {}
        for key, entry in data.items():
            if not isinstance(key, str) or not re.fullmatch(ENTRY_PATTERN, key):
                raise forms.ValidationError(f"{key!r}: name a function, a class or Class.method.")
            try:
                domain[key] = EntryDomain.model_validate(entry).model_dump(mode="json", exclude_defaults=True)
            except ValidationError as exc:
                problems = "; ".join(f"key '{'.'.join(str(p) for p in err['loc'])}': {err['msg']}" for err in exc.errors())
                raise forms.ValidationError(f"{key}: {problems}") from exc
        return domain

    def clean_speed_yaml(self) -> dict[str, Any]:
        """The same checks as rung.yaml's ``speed`` key (exercises.schema.Speed), each problem naming its key as the loader does."""
        data = _authors_yaml(self.cleaned_data.get("speed_yaml", ""), None)
        if data is None:
            return {}
        try:
            speed = Speed.model_validate(data)
        except ValidationError as exc:
            raise forms.ValidationError("; ".join(f"key '{'.'.join(['speed', *(str(part) for part in err['loc'])])}': {err['msg']}"
                                                  for err in exc.errors())) from exc
        return speed.model_dump(mode="json", exclude_none=True)

    def clean_hints_text(self) -> list[str]:
        """The same rules as rung.yaml's ``hints`` key (exercises.schema.RungMeta)."""
        hints = split_hints(self.cleaned_data.get("hints_text", ""))
        if len(hints) > HINTS_MAX:
            raise forms.ValidationError(f"{len(hints)} hints: at most {HINTS_MAX}.")
        for number, hint in enumerate(hints, start=1):
            if len(hint) > HINT_MAX_CHARS:
                raise forms.ValidationError(f"Hint {number} has {len(hint)} characters: at most {HINT_MAX_CHARS}.")
        return hints

    def _current_revision(self) -> str:
        return self.instance.updated_at.isoformat() if self.instance.pk and self.instance.updated_at else ""

    def clean_revision(self) -> str:
        revision: str = self.cleaned_data.get("revision", "")
        current = self._current_revision()
        # A client that does not send a revision (a script) opts out of the check.
        if current and "revision" in self.data and revision != current:
            # Carry the new revision in the re-rendered page: saving again overwrites.
            self.data = {**self.data.dict(), "revision": current} if hasattr(self.data, "dict") else {**self.data, "revision": current}
            editor = self.instance.updated_by.get_username() if self.instance.updated_by else "someone"
            raise forms.ValidationError(f"{editor} saved this draft after you opened it. Your edits are below; save again to replace theirs.")
        return revision

    def save(self, commit: bool = True) -> RungDraft:
        limits = {name: self.cleaned_data[f"limit_{name}"] for name in _LIMIT_FIELDS}
        self.instance.limits = Limits.model_validate(limits).model_dump(mode="json")
        self.instance.equivalent_mutants = self.cleaned_data.get("equivalent_mutants_yaml") or []
        self.instance.hints = self.cleaned_data.get("hints_text") or []
        if "domain_yaml" in self.data:  # a form without the field (a script, an old page) keeps the domain
            self.instance.domain = self.cleaned_data.get("domain_yaml") or {}
        if "speed_yaml" in self.data:  # likewise the speed section and its files
            files = {SPEED_INPUTS_FILE: self.cleaned_data.get("speed_inputs_code") or "", SPEED_BASELINE_FILE: self.cleaned_data.get("speed_baseline_code") or ""}
            # A file left empty is no file: the loader then says which one the section needs.
            self.instance.speed = draft_speed({"section": self.cleaned_data.get("speed_yaml") or {},
                                               "files": {name: text for name, text in files.items() if text.strip()}})
        return super().save(commit)


class HiddenTestForm(forms.Form):
    name = forms.RegexField(regex=r"^test_\w+$", required=False, max_length=200)
    description = forms.CharField(max_length=300, required=False)
    visibility = forms.ChoiceField(choices=TestVisibility.choices, initial=TestVisibility.HIDDEN)


class WrongSolutionForm(forms.Form):
    name = forms.RegexField(regex=r"^[a-z0-9_]+\.py$", required=False, max_length=100, help_text="e.g. forgets_values.py")
    description = forms.CharField(max_length=300, required=False)
    code = forms.CharField(required=False, widget=_CODE, strip=False)

    def clean(self) -> dict[str, Any]:
        self.cleaned_data = _unix_newlines(super().clean() or {})
        return self.cleaned_data


# Rows a form may bring: a posted TOTAL_FORMS of thousands made the page build
# and render as many forms (Django's own bound is 2,000), 2-4 s a request
# (issue 55, the endpoint fuzz). The shipped rungs have at most 33 hidden
# tests, 24 wrong solutions and 2 alternatives.
HIDDEN_TESTS_MAX = 100
WRONG_SOLUTIONS_MAX = 60
ALTERNATIVES_MAX = 20
HiddenTestFormSet = forms.formset_factory(HiddenTestForm, extra=1, max_num=HIDDEN_TESTS_MAX, absolute_max=HIDDEN_TESTS_MAX, validate_max=True)
WrongSolutionFormSet = forms.formset_factory(WrongSolutionForm, extra=1, max_num=WRONG_SOLUTIONS_MAX, absolute_max=WRONG_SOLUTIONS_MAX, validate_max=True)
# Alternatives (independent correct solutions) have the same three fields as wrong solutions.
AlternativeFormSet = forms.formset_factory(WrongSolutionForm, extra=1, max_num=ALTERNATIVES_MAX, absolute_max=ALTERNATIVES_MAX, validate_max=True)


def hidden_initial(draft: RungDraft) -> list[dict[str, Any]]:
    return [{"name": name, "description": meta.get("description", ""), "visibility": meta.get("visibility", "hidden")}
            for name, meta in dict(draft.hidden_test_meta or {}).items()]


def wrong_initial(draft: RungDraft, field: str = "wrong_solutions") -> list[dict[str, Any]]:
    """The rows of the wrong solutions (or, with ``field="alternatives"``, the alternatives)."""
    return [{"name": name, "description": entry.get("description", ""), "code": entry.get("code", "")}
            for name, entry in sorted(dict(getattr(draft, field) or {}).items())]


def hidden_meta_from(formset: Any) -> dict[str, dict[str, str]]:
    return {row["name"]: {"description": row["description"], "visibility": row["visibility"]}
            for row in formset.cleaned_data if row and row.get("name")}


def wrong_from(formset: Any) -> dict[str, dict[str, str]]:
    return {row["name"]: {"description": row["description"], "code": row["code"]}
            for row in formset.cleaned_data if row and row.get("name")}


class ImportForm(forms.Form):
    archive = forms.FileField(label="Catalog zip", help_text="The layout of an export: <track>/track.yaml, <track>/<module>/module.yaml, rungs/NN-slug/...")


class RejudgeApplyForm(forms.Form):
    confirm = forms.BooleanField(required=True, label="Record the new outcomes (the old ones stay in this rejudge)")


class ModuleRoleForm(forms.Form):
    """Grant a content role on a module to an account, by its username."""

    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=ContentRole.choices, initial=ContentRole.VIEWER)
