"""How much a pass means: the figures of a rung version's hidden tests (issue 58, item 4).

A Check (or ``validate_exercises``) measures them; Publish stores the passing
Check's figures on the new version. The shipped catalog's figures are kept
in ``strength.json`` at the catalog's root, written by ``validate_exercises
--write-strength`` with the content hash they were measured on, and
``load_exercises`` copies an entry onto the current version only when that
hash is the version's own: figures measured on other content are never shown.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .models import Rung, RungVersion

STRENGTH_FILE = "strength.json"
# Every figure a learner's line needs; a version missing one shows no line.
FIGURES = ("named", "generated", "wrong", "wrong_caught", "alternatives", "alternatives_passing", "mutation_score")


def strength_from_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """The figures in a Check's summary (``RungReport.summary()``); {} when any was not measured."""
    figures = {
        "named": summary.get("hidden_tests"),
        "generated": summary.get("generated_cases"),
        "wrong": summary.get("wrong_solutions"),
        "wrong_caught": summary.get("wrong_caught"),
        "alternatives": summary.get("alternatives"),
        "alternatives_passing": summary.get("alternatives_passing"),
        "mutation_score": summary.get("mutation_score"),
    }
    return figures if complete(figures) else {}


def complete(figures: dict[str, Any]) -> bool:
    """All figures present and numbers (bools are not)."""
    return all(isinstance(figures.get(key), int | float) and not isinstance(figures.get(key), bool) for key in FIGURES)


def record_strength(version: RungVersion, figures: dict[str, Any]) -> bool:
    """Store ``figures`` on ``version`` (only complete ones); True when the row changed."""
    if not complete(figures):
        return False
    kept = {key: figures[key] for key in FIGURES}
    if version.strength == kept:
        return False
    changed = RungVersion.objects.filter(pk=version.pk).update(strength=kept) == 1
    if changed:
        version.strength = kept
    return changed


def read_shipped_strength(catalog: Path) -> dict[str, dict[str, Any]]:
    """``strength.json``: rung slug -> {"content_hash", "figures"}; {} when there is no file."""
    path = catalog / STRENGTH_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def write_shipped_strength(catalog: Path, slug: str, content_hash: str, figures: dict[str, Any]) -> None:
    """Record one rung's measured figures in ``strength.json``, with the content hash they belong to."""
    data = read_shipped_strength(catalog)
    data[slug] = {"content_hash": content_hash, "figures": {key: figures[key] for key in FIGURES}}
    (catalog / STRENGTH_FILE).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def record_shipped_strength(catalog: Path) -> list[str]:
    """Copy ``strength.json``'s figures onto each rung's current version whose content they were measured on.

    Returns the slugs whose version changed. An entry for other content (a
    rung edited since it was measured) is left out: its version shows no line.
    """
    changed = []
    for slug, entry in sorted(read_shipped_strength(catalog).items()):
        # Only the current version, and only when the figures were measured on its very content.
        rung = Rung.objects.filter(slug=slug).select_related("current_version").first()
        version = rung.current_version if rung is not None else None
        if version is not None and version.content_hash == entry.get("content_hash") and record_strength(version, dict(entry.get("figures") or {})):
            changed.append(slug)
    return changed
