"""Rung and module content as catalog files, and zips of them both ways.

The layout is exactly the one ``exercises/`` uses, and reading goes through
``exercises.loader``: a draft, an export and the shipped catalog are checked
by the same code. Output is canonical (fixed key order, fixed zip
timestamps), so exporting what an import of an export produced gives the
same bytes again.
"""

from __future__ import annotations

import io
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

import yaml
from django.db import IntegrityError, transaction

from core.roles import can_edit_module, is_admin
from core.types import User
from exercises.constants import gpu_need
from exercises.exceptions import CatalogError
from exercises.loader import RungFiles, TrackFiles, read_catalog, read_rung
from exercises.models import Module, Rung, Track
from exercises.schema import Limits
from exercises.services import SyncReport, content_fields, external_id_taken, store_catalog, stored_speed
from sandbox.jobs import planned_tests

from .content_roles import make_creator_editor
from .exceptions import ImportRefused
from .messages import EXTERNAL_ID_TAKEN, TAKEN_MEANWHILE
from .models import RungDraft

# Bounds on an uploaded zip: the catalog is text and small.
MAX_IMPORT_BYTES = 8 * 1024 * 1024
MAX_IMPORT_FILES = 2000
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


class RungContent(Protocol):
    """What RungVersion and RungDraft share: the content of one rung."""

    @property
    def gpu(self) -> str | bool: ...  # no | preferred | required (a bool before the three-way choice)

    title: str
    summary: str
    minutes: int
    difficulty: str
    limits: Any
    instructions_md: str
    starter_code: str
    reference_code: str
    visible_tests: str
    hidden_tests: str
    hidden_test_meta: Any
    wrong_solutions: Any


def _dump_yaml(data: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, default_flow_style=False, width=4096)


def draft_speed(stored: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a draft keeps of a speed phase (RungDraft.speed): rung.yaml's section and its files, without
    the job's payload a version keeps beside them (RungVersion.speed); {} for a rung without one."""
    return {key: stored[key] for key in ("section", "files") if stored and stored.get(key)}


def rung_folder(order: int, slug: str) -> str:
    return f"{order:02d}-{slug}"


def rung_files(content: RungContent, slug: str, *, senior: bool = False) -> dict[str, str]:
    """The files of one rung folder ({path inside the folder: text})."""
    meta_by_name: dict[str, Any] = dict(content.hidden_test_meta or {})
    # Hidden tests in the order the test file defines them, then any
    # description without a test (the loader reports that one by name).
    names = [name for name in planned_tests(content.hidden_tests) if name in meta_by_name]
    names += [name for name in meta_by_name if name not in names]
    hidden: dict[str, Any] = {}
    for name in names:
        entry: dict[str, Any] = {"description": str(meta_by_name[name].get("description", ""))}
        visibility = meta_by_name[name].get("visibility", "hidden")
        if visibility != "hidden":
            entry["visibility"] = str(visibility)
        hidden[name] = entry
    wrong: dict[str, Any] = dict(content.wrong_solutions or {})
    limits = Limits.model_validate({**Limits().model_dump(), **dict(content.limits or {})}).model_dump(mode="json")
    meta = {
        "slug": slug,
        "title": content.title,
        "minutes": content.minutes,
        "difficulty": str(content.difficulty),
        "summary": content.summary,
        "limits": limits,
        "gpu": str(gpu_need(content.gpu)),
        "hidden_tests": hidden,
        "wrong_solutions": {name: str(wrong[name].get("description", "")) for name in sorted(wrong)},
    }
    # Written only when there are some: a rung without the key exports as it was.
    equivalent = [{"id": str(item.get("id", "")), "reason": str(item.get("reason", ""))} for item in getattr(content, "equivalent_mutants", None) or []]
    if equivalent:
        meta["equivalent_mutants"] = equivalent
    if senior:  # ladder placement lives on the Rung, not in its versions
        meta["senior"] = True
    hints = [str(hint) for hint in getattr(content, "hints", None) or []]
    if hints:
        meta["hints"] = hints
    alternatives: dict[str, Any] = dict(getattr(content, "alternatives", None) or {})
    if alternatives:
        meta["alternatives"] = {name: str(alternatives[name].get("description", "")) for name in sorted(alternatives)}
    domain = dict(getattr(content, "domain", None) or {})
    if domain:
        meta["domain"] = domain
    # A speed-graded version or draft keeps rung.yaml's section and its files (exercises.services.stored_speed).
    speed: dict[str, Any] = dict(getattr(content, "speed", None) or {})
    if speed.get("section"):
        meta["speed"] = dict(speed["section"])
    files = {
        "rung.yaml": _dump_yaml(meta),
        "instructions.md": content.instructions_md,
        "starter.py": content.starter_code,
        "reference.py": content.reference_code,
        "test_visible.py": content.visible_tests,
        "test_hidden.py": content.hidden_tests,
    }
    for name in sorted(wrong):
        files[f"wrong/{name}"] = str(wrong[name].get("code", ""))
    for name in sorted(alternatives):
        files[f"alternatives/{name}"] = str(alternatives[name].get("code", ""))
    for name, text in sorted(dict(speed.get("files") or {}).items()):
        files[str(name)] = str(text)
    return files


# What a file system takes: a name in a path of at most NAME_MAX bytes, and
# the whole path, under a temporary folder, well within PATH_MAX (4,096). A
# longer one was an OSError, a 500 (issue 55). The catalog's own longest path
# is about 100 characters.
MAX_NAME_BYTES = 255
MAX_PATH_CHARS = 1024


def _safe_relative(name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not path.parts or any(part in ("", ".") for part in path.parts) or "\\" in name:
        raise ImportRefused(f"{name}: not a plain relative path")
    shown = name if len(name) <= 200 else f"{name[:120]}...{name[-60:]}"
    if "\x00" in name:
        raise ImportRefused(f"{shown!r}: a path with a NUL character")
    if len(name) > MAX_PATH_CHARS:
        raise ImportRefused(f"{shown}: the path is longer than {MAX_PATH_CHARS} characters")
    if any(len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for part in path.parts):
        raise ImportRefused(f"{shown}: a name in the path is longer than {MAX_NAME_BYTES} bytes")
    return path


def write_tree(root: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        target = root / _safe_relative(name)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        except (OSError, UnicodeEncodeError) as exc:
            raise ImportRefused(f"{str(_safe_relative(name))[:200]}: cannot be written as a file ({getattr(exc, 'strerror', None) or exc})") from exc


def _strip(root: Path, message: str) -> str:
    """A loader message names the temporary folder; authors want the file inside it."""
    return message.replace(f"{root}/", "").replace(str(root), ".")


@contextmanager
def _scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="dojo-authoring-") as folder:
        yield Path(folder)


def read_rung_files(files: Mapping[str, str], slug: str, order: int) -> RungFiles:
    """Load a rung's files exactly as the catalog loader does.

    Raises CatalogError naming the file and key, relative to the rung folder.
    """
    with _scratch() as root:
        folder = root / rung_folder(order, slug)
        try:
            write_tree(folder, files)
            return read_rung(folder)
        except ImportRefused as exc:
            raise CatalogError(str(exc)) from exc
        except CatalogError as exc:
            raise CatalogError(_strip(root, str(exc))) from exc


def _module_yaml(module: Module) -> str:
    meta = {
        "id": module.external_id,
        "slug": module.slug,
        "title": module.title,
        "order": module.order,
        "audience": module.audience,
        "depth": module.depth,
        "summary": module.summary,
        "why_it_matters": module.why_it_matters,
        "one_liners": list(module.one_liners),
        "sources": [{key: value for key, value in dict(source).items() if value not in (None, "")} for source in module.sources],
        "next_module": module.next_module_slug or None,
    }
    return _dump_yaml(meta)


def _track_yaml(track: Track) -> str:
    return _dump_yaml({"slug": track.slug, "title": track.title, "summary": track.summary, "order": track.order})


def export_module(module: Module) -> dict[str, str]:
    """A module's published content as catalog files ({path in the zip: text}).

    Only published versions are exported: drafts are work in progress.
    """
    track = module.track
    base = f"{track.slug}/{module.slug}"
    files = {f"{track.slug}/track.yaml": _track_yaml(track), f"{base}/module.yaml": _module_yaml(module)}
    for name, text in (("concept.md", module.concept_md), ("worked_example.md", module.worked_example_md), ("reference.md", module.reference_md)):
        if text:
            files[f"{base}/{name}"] = text
    if module.explanations:
        files[f"{base}/explanations.yaml"] = _dump_yaml({"explanations": list(module.explanations)})
    rungs = Rung.objects.filter(module=module, current_version__isnull=False).select_related("current_version").order_by("order", "slug")
    for rung in rungs:
        assert rung.current_version is not None
        folder = f"{base}/rungs/{rung_folder(rung.order, rung.slug)}"
        for name, text in rung_files(rung.current_version, rung.slug, senior=rung.senior).items():
            files[f"{folder}/{name}"] = text
    return files


def zip_files(files: Mapping[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            archive.writestr(info, files[name].encode("utf-8"))
    return buffer.getvalue()


def unzip_files(data: bytes) -> dict[str, str]:
    """The text files of an uploaded zip, refusing anything that is not plain."""
    if len(data) > MAX_IMPORT_BYTES:
        raise ImportRefused(f"the zip is larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MB")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ImportRefused("not a zip file") from exc
    files: dict[str, str] = {}
    total = 0
    with archive:
        members = archive.infolist()
        if len(members) > MAX_IMPORT_FILES:
            raise ImportRefused(f"more than {MAX_IMPORT_FILES} files")
        for info in members:
            if info.is_dir():
                continue
            mode = info.external_attr >> 16
            if stat.S_IFMT(mode) not in (0, stat.S_IFREG):
                raise ImportRefused(f"{info.filename}: only plain files are allowed (no links)")
            name = str(_safe_relative(info.filename))
            if PurePosixPath(name).name in ("__pycache__", ".DS_Store") or "__pycache__" in PurePosixPath(name).parts:
                continue
            total += info.file_size
            if total > MAX_IMPORT_BYTES:
                raise ImportRefused(f"the unpacked files exceed {MAX_IMPORT_BYTES // (1024 * 1024)} MB")
            try:
                files[name] = archive.read(info).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ImportRefused(f"{name}: not UTF-8 text") from exc
            except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
                # A wrong CRC or size, a truncated or corrupt entry.
                raise ImportRefused(f"{name}: damaged in the zip file ({exc})"[:300]) from exc
            except (NotImplementedError, RuntimeError) as exc:
                # An unknown compression method, or an encrypted entry.
                raise ImportRefused(f"{name}: cannot be unpacked ({exc})"[:300]) from exc
    _refuse_file_folder_clashes(files)
    return files


def _refuse_file_folder_clashes(files: Mapping[str, str]) -> None:
    """A zip may list ``a`` as a file and ``a/b`` inside it as a folder: no folder can hold both."""
    folders = {str(parent) for name in files for parent in PurePosixPath(name).parents if str(parent) != "."}
    clash = sorted(folders & set(files))
    if clash:
        raise ImportRefused(f"{clash[0]}: is both a file and a folder in the zip file")


def _check_import_allowed(catalog: list[TrackFiles], user: User) -> None:
    """An instructor may add modules and change those they are editor of; only admins change tracks or others' modules.
    No one imports a rung whose slug an unpublished draft of another module holds (slugs are unique across the site),
    nor a module whose catalog id another module has."""
    for track_files in catalog:
        for module_files in track_files.modules:
            taken = external_id_taken(module_files.meta.id, exclude_slug=module_files.meta.slug)
            if taken is not None:
                raise ImportRefused(f"{module_files.meta.slug}/module.yaml: " + EXTERNAL_ID_TAKEN.format(external_id=module_files.meta.id, slug=taken))
            for rung_files_ in module_files.rungs:
                draft = RungDraft.objects.filter(slug=rung_files_.meta.slug, rung__isnull=True).select_related("module").first()
                if draft is not None:
                    raise ImportRefused(f"rung '{draft.slug}' is an unpublished draft in module '{draft.module.slug}'; its slug is taken")
    if is_admin(user):
        return
    for track_files in catalog:
        track = Track.objects.filter(slug=track_files.meta.slug).first()
        if track is None:
            raise ImportRefused(f"track '{track_files.meta.slug}' does not exist; only admins add tracks")
        meta = track_files.meta
        if (track.title, track.summary, track.order) != (meta.title, meta.summary, meta.order):
            raise ImportRefused(f"{meta.slug}/track.yaml differs from the track on the site; only admins change tracks")
        for module_files in track_files.modules:
            module = Module.objects.filter(slug=module_files.meta.slug).first()
            if module is not None and not can_edit_module(user, module):
                raise ImportRefused(f"module '{module.slug}': only its editors import over it")
            for rung_files_ in module_files.rungs:
                rung = Rung.objects.filter(slug=rung_files_.meta.slug).select_related("module").first()
                if rung is not None and rung.module.slug != module_files.meta.slug:
                    raise ImportRefused(f"rung '{rung.slug}' belongs to module '{rung.module.slug}'")


def import_files(files: Mapping[str, str], user: User) -> SyncReport:
    """Load catalog files (tracks, modules, rungs) into the database.

    Reads and checks everything first (the catalog loader), then syncs in
    one transaction. An admin's import publishes: a changed rung gets a new
    published version, an unchanged one nothing. Anyone else's lands as
    drafts (the content gate, issue 57): a new or changed rung becomes its
    module's draft, which publishes only through a passing Check (reference
    passes, starter fails, every wrong solution caught, the mutation gate),
    like any edit. Module details are stored either way, as the module form
    stores them. A new module's importer becomes its editor.
    """
    with _scratch() as root:
        write_tree(root, files)
        try:
            catalog = read_catalog(root)
        except CatalogError as exc:
            raise ImportRefused(_strip(root, str(exc))) from exc
        if not any(track.modules for track in catalog):
            raise ImportRefused("the zip holds no module (expected <track>/track.yaml and <track>/<module>/module.yaml)")
        _check_import_allowed(catalog, user)
        publish = is_admin(user)
        try:
            with transaction.atomic():
                before = set(Module.objects.values_list("slug", flat=True))
                report = store_catalog(catalog, rungs=publish)  # read above, outside the transaction
                for track_files in catalog:
                    for module_files in track_files.modules:
                        module = Module.objects.get(slug=module_files.meta.slug)
                        if module_files.meta.slug not in before:
                            make_creator_editor(module, user)
                        if not publish:
                            _store_drafts(module, module_files.rungs, user, report)
        except IntegrityError as exc:  # a module's id or a slug taken since the checks above
            raise ImportRefused(TAKEN_MEANWHILE) from exc
    return report


def _store_drafts(module: Module, rungs: list[RungFiles], user: User, report: SyncReport) -> None:
    """Each new or changed rung of an import becomes the module's draft (replacing a draft there); nothing is published."""
    for files in rungs:
        report.rungs += 1
        rung = Rung.objects.filter(module=module, slug=files.meta.slug).select_related("current_version").first()
        current = rung.current_version if rung is not None else None
        if current is not None and current.content_hash == files.content_hash and rung is not None and rung.order == files.order:
            continue
        # A speed-graded rung's draft keeps its speed section and files: its Check times the reference (issue 60).
        values = {**content_fields(files), "speed": draft_speed(stored_speed(files)), "order": files.order, "rung": rung,
                  "base_version": current, "updated_by": user}
        RungDraft.objects.update_or_create(module=module, slug=files.meta.slug, defaults=values)
        report.drafts.append(files.meta.slug)
