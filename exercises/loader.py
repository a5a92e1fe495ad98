"""Read the catalog from files into typed objects.

Nothing here touches the database: ``services.sync_catalog`` does that. Every
error is a CatalogError naming the file, and the key where there is one.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from core.constants import MARKDOWN_MAX_CHARS
from core.untrusted_patterns import untrusted
from core.write_guard import outside_write_transaction
from sandbox.pyparse import parse_python

from .bounds import problems_of
from .constants import MODULE_FILES, RUNG_FILES
from .exceptions import CatalogError
from .schema import SPEED_BASELINE_FILE, SPEED_INPUTS_FILE, ExplanationsFile, ModuleMeta, RungMeta, TrackMeta

M = TypeVar("M", bound=BaseModel)

RUNG_DIR_PATTERN = untrusted(r"^(\d{2})-([a-z0-9]+(?:-[a-z0-9]+)*)$", max_chars=255, reads="a rung folder's name in an imported module")
IGNORED_NAMES = {"__pycache__", ".DS_Store"}
# Beside module.yaml, optional: the explanations the mentor answers concept questions with.
EXPLANATIONS_FILE = "explanations.yaml"


def speed_payload(meta: RungMeta, reference: str, files: dict[str, str]) -> dict[str, Any] | None:
    """A speed section and its files as the harness's speed phase takes them."""
    speed = meta.speed
    if speed is None:
        return None
    return {
        "entry": speed.entry,
        "generator": files.get(SPEED_INPUTS_FILE, ""),
        "sizes": [dict(size) for size in speed.sizes],
        "baseline": reference if speed.baseline == "reference" else files.get(SPEED_BASELINE_FILE, ""),
        "min_ratio": speed.target.min_ratio,
        "budget_s": speed.budget_s,
    }


def _read_speed_files(path: Path, meta: RungMeta) -> dict[str, str]:
    """speed_inputs.py (and baseline.py for a naive baseline): present exactly when the speed section asks for them."""
    speed = meta.speed
    wanted = set() if speed is None else {SPEED_INPUTS_FILE} | ({SPEED_BASELINE_FILE} if speed.baseline == "naive" else set())
    for name in (SPEED_INPUTS_FILE, SPEED_BASELINE_FILE):
        if (path / name).exists() and name not in wanted:
            raise CatalogError(f"{path / name}: only a rung whose speed section needs it has this file (key 'speed')")
    files: dict[str, str] = {}
    for name in sorted(wanted):
        files[name] = _read_text(path / name)
        _check_python(path / name, files[name])
    if speed is None:
        return files
    defined = _top_level_functions(files[SPEED_INPUTS_FILE])
    if "make_inputs" not in defined:
        raise CatalogError(f"{path / SPEED_INPUTS_FILE}: defines no make_inputs(rng, **size) function")
    if SPEED_BASELINE_FILE in files and speed.entry not in _top_level_functions(files[SPEED_BASELINE_FILE]):
        raise CatalogError(f"{path / SPEED_BASELINE_FILE}: defines no {speed.entry}() (key 'speed.entry')")
    return files


def _top_level_functions(source: str) -> set[str]:
    return {node.name for node in parse_python(source).body if isinstance(node, ast.FunctionDef)}


@dataclass(frozen=True)
class RungFiles:
    path: Path
    order: int
    meta: RungMeta
    instructions: str
    starter: str
    reference: str
    visible_tests: str
    hidden_tests: str
    wrong_solutions: dict[str, str]
    # Independent correct solutions: alternatives/<name>.py -> its code.
    alternatives: dict[str, str] = field(default_factory=dict)
    # A speed-graded rung's own files: speed_inputs.py and, for a naive baseline, baseline.py.
    speed_files: dict[str, str] = field(default_factory=dict)

    @property
    def speed_payload(self) -> dict[str, Any] | None:
        """What a Submit's job carries for the speed phase (``sandbox.jobs.Job.speed``); None for a rung without one."""
        return speed_payload(self.meta, self.reference, self.speed_files)

    @property
    def content_hash(self) -> str:
        """A digest of everything a grade depends on: a change makes a new version."""
        meta = self.meta.model_dump(mode="json", exclude={"senior"})
        if not meta["equivalent_mutants"]:
            del meta["equivalent_mutants"]  # a rung without the key keeps the hash it had before the key existed
        for key in ("hints", "alternatives", "domain", "speed"):
            if not meta[key]:
                del meta[key]  # likewise for the keys added later
        if meta.get("speed") and meta["speed"]["predict"] is None:
            del meta["speed"]["predict"]  # and for speed.predict, added after the first speed rung
        payload = {
            "meta": meta,
            "instructions": self.instructions,
            "starter": self.starter,
            "reference": self.reference,
            "visible_tests": self.visible_tests,
            "hidden_tests": self.hidden_tests,
            "wrong_solutions": self.wrong_solutions,
        }
        if self.alternatives:
            payload["alternatives"] = self.alternatives
        if self.speed_files:
            payload["speed_files"] = self.speed_files
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class ModuleFiles:
    path: Path
    meta: ModuleMeta
    concept: str
    worked_example: str
    reference: str
    rungs: list[RungFiles] = field(default_factory=list)
    explanations: ExplanationsFile | None = None


@dataclass(frozen=True)
class TrackFiles:
    path: Path
    meta: TrackMeta
    modules: list[ModuleFiles] = field(default_factory=list)


def _read_text(path: Path) -> str:
    if not path.is_file():
        raise CatalogError(f"{path}: file is missing")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc
    if path.suffix == ".md" and len(text) > MARKDOWN_MAX_CHARS:
        # Rendered on every page view, and timed at this length (issue 55).
        raise CatalogError(f"{path}: {len(text):,} characters of Markdown; at most {MARKDOWN_MAX_CHARS:,}")
    return text


def parse_yaml(text: str) -> Any:
    """``yaml.safe_load`` of text an author wrote; ValueError saying what is wrong, for all it may raise."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"invalid YAML: {exc}") from exc
    except RecursionError as exc:  # PyYAML composes nested collections recursively
        raise ValueError("invalid YAML: nested too deeply") from exc
    except ValueError as exc:  # an integer of more digits than Python converts (4,300)
        raise ValueError(f"invalid YAML: {exc}") from exc


def _read_yaml(path: Path, model: type[M]) -> M:
    text = _read_text(path)
    try:
        data: Any = parse_yaml(text)
    except ValueError as exc:
        raise CatalogError(f"{path}: {exc}") from exc
    if not isinstance(data, dict):
        raise CatalogError(f"{path}: expected a mapping of keys at the top level")
    try:
        meta = model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(part) for part in err["loc"]) or "(top level)"
            problems.append(f"key '{key}': {err['msg']}")
        raise CatalogError(f"{path}: " + "; ".join(problems)) from exc
    # What the database's columns hold (exercises.bounds).
    too_big = problems_of(model.__name__, meta.model_dump())
    if too_big:
        raise CatalogError(f"{path}: " + "; ".join(too_big))
    return meta


def _test_functions(path: Path, source: str) -> list[str]:
    try:
        tree = parse_python(source, filename=str(path))
    except SyntaxError as exc:
        raise CatalogError(f"{path}: syntax error on line {exc.lineno}: {exc.msg}") from exc
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_")
    ]


def _check_python(path: Path, source: str) -> None:
    try:
        parse_python(source, filename=str(path))
    except SyntaxError as exc:
        raise CatalogError(f"{path}: syntax error on line {exc.lineno}: {exc.msg}") from exc


def _read_solutions(path: Path, folder: str, key: str, described: dict[str, str], ask: str) -> dict[str, str]:
    """The .py files of ``path/folder`` (wrong/ or alternatives/), each described in rung.yaml's ``key``."""
    found: dict[str, str] = {}
    where = path / folder
    if where.is_dir():
        for child in sorted(where.iterdir()):
            if child.name in IGNORED_NAMES:
                continue
            if child.suffix != ".py" or not child.is_file():
                raise CatalogError(f"{child}: {'wrong solutions' if folder == 'wrong' else 'alternatives'} are .py files")
            found[child.name] = _read_text(child)
            _check_python(child, found[child.name])
    for name in found:
        if name not in described:
            raise CatalogError(f"{path / 'rung.yaml'}: key '{key}.{name}': missing ({ask})")
    for name in set(described) - set(found):
        raise CatalogError(f"{path / 'rung.yaml'}: key '{key}.{name}': no such file in {folder}/")
    return found


@outside_write_transaction
def read_rung(path: Path) -> RungFiles:
    match = RUNG_DIR_PATTERN.match(path.name)
    if not match:
        raise CatalogError(f"{path}: a rung folder is named NN-slug, e.g. 01-kv-cache-size")
    meta = _read_yaml(path / "rung.yaml", RungMeta)
    if meta.slug != match.group(2):
        raise CatalogError(f"{path / 'rung.yaml'}: key 'slug': '{meta.slug}' differs from the folder name '{path.name}'")
    allowed = set(RUNG_FILES) | {"wrong", "alternatives", SPEED_INPUTS_FILE, SPEED_BASELINE_FILE} | IGNORED_NAMES
    for child in path.iterdir():
        if child.name not in allowed:
            raise CatalogError(f"{child}: unexpected file in a rung folder (allowed: {', '.join(sorted(allowed))})")
    texts = {name: _read_text(path / name) for name in RUNG_FILES if name != "rung.yaml"}
    for name in ("starter.py", "reference.py"):
        _check_python(path / name, texts[name])
    visible = _test_functions(path / "test_visible.py", texts["test_visible.py"])
    if not visible:
        raise CatalogError(f"{path / 'test_visible.py'}: defines no test_ function")
    hidden = _test_functions(path / "test_hidden.py", texts["test_hidden.py"])
    if not hidden:
        raise CatalogError(f"{path / 'test_hidden.py'}: defines no test_ function")
    described = set(meta.hidden_tests)
    for name in hidden:
        if name not in described:
            raise CatalogError(f"{path / 'rung.yaml'}: key 'hidden_tests.{name}': missing (every hidden test needs a description)")
    for name in described - set(hidden):
        raise CatalogError(f"{path / 'rung.yaml'}: key 'hidden_tests.{name}': no such test in test_hidden.py")
    wrong = _read_solutions(path, "wrong", "wrong_solutions", meta.wrong_solutions, "describe the mistake it makes")
    alternatives = _read_solutions(path, "alternatives", "alternatives", meta.alternatives, "say how it differs from the reference")
    speed_files = _read_speed_files(path, meta)
    return RungFiles(
        path=path,
        order=int(match.group(1)),
        meta=meta,
        instructions=texts["instructions.md"],
        starter=texts["starter.py"],
        reference=texts["reference.py"],
        visible_tests=texts["test_visible.py"],
        hidden_tests=texts["test_hidden.py"],
        wrong_solutions=wrong,
        alternatives=alternatives,
        speed_files=speed_files,
    )


def read_module(path: Path) -> ModuleFiles:
    meta = _read_yaml(path / "module.yaml", ModuleMeta)
    if meta.slug != path.name:
        raise CatalogError(f"{path / 'module.yaml'}: key 'slug': '{meta.slug}' differs from the folder name '{path.name}'")
    texts = {name: _read_text(path / name) if (path / name).exists() else "" for name in MODULE_FILES[1:]}
    explanations = _read_yaml(path / EXPLANATIONS_FILE, ExplanationsFile) if (path / EXPLANATIONS_FILE).exists() else None
    rungs_dir = path / "rungs"
    rungs = [read_rung(child) for child in sorted(rungs_dir.iterdir()) if child.is_dir() and child.name not in IGNORED_NAMES] if rungs_dir.is_dir() else []
    slugs = [rung.meta.slug for rung in rungs]
    if len(set(slugs)) != len(slugs):
        raise CatalogError(f"{rungs_dir}: two rungs share a slug")
    return ModuleFiles(
        path=path,
        meta=meta,
        concept=texts["concept.md"],
        worked_example=texts["worked_example.md"],
        reference=texts["reference.md"],
        rungs=rungs,
        explanations=explanations,
    )


def read_track(path: Path) -> TrackFiles:
    meta = _read_yaml(path / "track.yaml", TrackMeta)
    if meta.slug != path.name:
        raise CatalogError(f"{path / 'track.yaml'}: key 'slug': '{meta.slug}' differs from the folder name '{path.name}'")
    modules = [read_module(child) for child in sorted(path.iterdir()) if (child / "module.yaml").is_file()]
    return TrackFiles(path=path, meta=meta, modules=modules)


@outside_write_transaction
def read_catalog(root: Path) -> list[TrackFiles]:
    """Every track under ``root`` (a folder holding ``<track>/track.yaml``)."""
    if not root.is_dir():
        raise CatalogError(f"{root}: the exercises folder does not exist")
    tracks = [read_track(child) for child in sorted(root.iterdir()) if (child / "track.yaml").is_file()]
    _refuse_shared_ids(tracks)
    return tracks


def _refuse_shared_ids(tracks: list[TrackFiles]) -> None:
    """A catalog id names one module ("Where next" links follow it; exercises.Module's unique constraint)."""
    seen: dict[str, str] = {}
    for track in tracks:
        for module in track.modules:
            if module.meta.id and module.meta.id in seen:
                raise CatalogError(f"{module.path / 'module.yaml'}: key 'id': '{module.meta.id}' is already the id of module '{seen[module.meta.id]}'")
            seen[module.meta.id] = module.meta.slug


def check_in_app_sources(tracks: list[TrackFiles]) -> None:
    """An in-app "Go further" link must name a module of this catalog by its id.

    For a whole catalog (the shipped one, checked at start-up); a zip that
    imports one module may point at modules it does not carry."""
    known = {module.meta.id for track in tracks for module in track.modules}
    for track in tracks:
        for module in track.modules:
            for n, source in enumerate(module.meta.sources):
                if source.module is not None and source.module not in known:
                    raise CatalogError(f"{module.path / 'module.yaml'}: key 'sources.{n}.module': no module has the id '{source.module}'")
