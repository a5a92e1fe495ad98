"""Catalog services: load the files into the database, idempotently."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Max

from .loader import ModuleFiles, RungFiles, TrackFiles, read_catalog
from .models import Module, Rung, RungVersion, Track
from .schema import domain_data


@dataclass
class SyncReport:
    tracks: int = 0
    modules: int = 0
    rungs: int = 0
    new_versions: list[str] = field(default_factory=list)
    changed_modules: list[str] = field(default_factory=list)
    # Rungs stored as drafts to Check and publish (authoring's import for non-admins), not as versions.
    drafts: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.new_versions or self.changed_modules)


def external_id_taken(external_id: str, *, exclude_slug: str | None = None) -> str | None:
    """The slug of the module that already has the catalog id ``external_id`` (other than ``exclude_slug``), or None.

    A catalog id names one module (a conditional unique constraint): "Where next" links follow it.
    """
    if not external_id:
        return None
    taken = Module.objects.filter(external_id=external_id)
    if exclude_slug is not None:
        taken = taken.exclude(slug=exclude_slug)
    slug: str | None = taken.values_list("slug", flat=True).first()
    return slug


def _sync_track(files: TrackFiles) -> Track:
    track, _ = Track.objects.update_or_create(
        slug=files.meta.slug,
        defaults={"title": files.meta.title, "summary": files.meta.summary, "order": files.meta.order},
    )
    return track


def explanation_data(files: ModuleFiles) -> list[dict[str, Any]]:
    """The module's explanations as stored (and exported): each as written, defaults left out."""
    if files.explanations is None:
        return []
    return [explanation.model_dump(mode="json", exclude_defaults=True) for explanation in files.explanations.explanations]


def _sync_module(track: Track, files: ModuleFiles, report: SyncReport) -> Module:
    meta = files.meta
    values = {
        "track": track,
        "external_id": meta.id,
        "title": meta.title,
        "order": meta.order,
        "audience": meta.audience,
        "depth": meta.depth,
        "summary": meta.summary,
        "why_it_matters": meta.why_it_matters,
        "concept_md": files.concept,
        "worked_example_md": files.worked_example,
        "reference_md": files.reference,
        "one_liners": list(meta.one_liners),
        "sources": [source.model_dump(mode="json") for source in meta.sources],
        "explanations": explanation_data(files),
        "next_module_slug": meta.next_module or "",
    }
    module = Module.objects.filter(slug=meta.slug).first()
    if module is None:
        module = Module.objects.create(slug=meta.slug, **values)
        report.changed_modules.append(meta.slug)
        return module
    dirty = [name for name, value in values.items() if getattr(module, name) != value]
    if dirty:
        for name in dirty:
            setattr(module, name, values[name])
        module.save(update_fields=dirty)
        report.changed_modules.append(meta.slug)
    return module


def content_fields(files: RungFiles) -> dict[str, Any]:
    """A rung's content as RungVersion's fields (authoring's RungDraft has the same names), from its files."""
    meta = files.meta
    return {
        "title": meta.title,
        "summary": meta.summary,
        "minutes": meta.minutes,
        "difficulty": meta.difficulty,
        "instructions_md": files.instructions,
        "starter_code": files.starter,
        "reference_code": files.reference,
        "visible_tests": files.visible_tests,
        "hidden_tests": files.hidden_tests,
        "hidden_test_meta": {name: test.model_dump(mode="json") for name, test in meta.hidden_tests.items()},
        "wrong_solutions": {name: {"description": meta.wrong_solutions[name], "code": code} for name, code in files.wrong_solutions.items()},
        "limits": meta.limits.model_dump(mode="json"),
        "gpu": meta.gpu,
        "equivalent_mutants": [mutant.model_dump(mode="json") for mutant in meta.equivalent_mutants],
        "hints": list(meta.hints),
        "alternatives": {name: {"description": meta.alternatives[name], "code": code} for name, code in files.alternatives.items()},
        "domain": domain_data(meta),
    }


def stored_speed(files: RungFiles) -> dict[str, Any]:
    """What a version keeps of a speed section: the job's payload, plus the section and its files as
    rung.yaml and the folder had them, so an export writes the rung back whole (``RungVersion.speed_payload``
    leaves those two out of the job)."""
    payload = files.speed_payload
    if payload is None or files.meta.speed is None:
        return {}
    return {**payload, "section": files.meta.speed.model_dump(mode="json", exclude_none=True), "files": dict(files.speed_files)}


def publish_rung_version(rung: Rung, files: RungFiles) -> RungVersion | None:
    """Make ``files`` the rung's current version; None when nothing changed.

    Versions are append-only: a change creates version N+1 and earlier
    submissions keep pointing at the version they were graded against.
    """
    digest = files.content_hash
    current = rung.current_version
    if current is not None and current.content_hash == digest:
        return None
    number = (rung.versions.aggregate(top=Max("number"))["top"] or 0) + 1
    # The speed phase's payload rides on the version only (a draft keeps the section and its files: authoring.transfer.draft_speed).
    version = RungVersion.objects.create(rung=rung, number=number, content_hash=digest, speed=stored_speed(files), **content_fields(files))
    rung.current_version = version
    rung.save(update_fields=["current_version"])
    return version


def sync_catalog(root: Path) -> SyncReport:
    """Load every track, module and rung under ``root`` into the database.

    Reads and validates all files first, so a broken file changes nothing.
    A second run over unchanged files creates nothing.
    """
    return store_catalog(read_catalog(root))


@transaction.atomic
def store_catalog(catalog: list[TrackFiles], *, rungs: bool = True) -> SyncReport:
    """Write a catalog already read (``read_catalog``): the transaction only writes (core.write_guard).

    With ``rungs=False`` only tracks and modules are written: the caller
    stores the rungs otherwise (authoring's import, as drafts).
    """
    report = SyncReport()
    for track_files in catalog:
        track = _sync_track(track_files)
        report.tracks += 1
        for module_files in track_files.modules:
            module = _sync_module(track, module_files, report)
            report.modules += 1
            for rung_files in module_files.rungs if rungs else ():
                placement = {"module": module, "order": rung_files.order, "senior": rung_files.meta.senior}
                rung, _ = Rung.objects.get_or_create(slug=rung_files.meta.slug, defaults=placement)
                if rung.module_id != module.pk or rung.order != rung_files.order or rung.senior != rung_files.meta.senior:
                    rung.module, rung.order, rung.senior = module, rung_files.order, rung_files.meta.senior
                    rung.save(update_fields=["module", "order", "senior"])
                if publish_rung_version(rung, rung_files) is not None:
                    report.new_versions.append(rung.slug)
                report.rungs += 1
    return report
