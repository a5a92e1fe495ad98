"""Cutting a module's teaching text into passages: the text a learner can already read.

Reference solutions, hidden tests and wrong solutions are never read here.
The sectioning (``split_sections``, ``reference_anchor``) is the frontend's
(``core.sections``): passages link to the anchors the pages render.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.urls import reverse
from django.utils.text import slugify

from core.sections import split_sections
from exercises.models import Module, Rung

from .constants import (
    INDEX_VERSION,
    PassageKind,
)

# --- Cutting the module into passages --------------------------------------


@dataclass(frozen=True)
class PassageDraft:
    key: str
    kind: str
    title: str
    url: str
    text: str
    rung: Rung | None = None
    # Searched like the title but never shown: an explanation's question phrasings and keywords.
    search_text: str = ""


# An HTML comment: the page never shows it (the Markdown renderer and nh3 drop
# it), so neither may the mentor. Authors leave notes to each other in them.
# (One left open is shown as text on the page, and stays.)
# Found with str.find, not a pattern: "<!--.*?-->" scanned to the end from each
# of many unclosed openers, quadratic in an instructor's text.
def _shown(markdown: str) -> str:
    """``markdown`` without what the rendered page leaves out: HTML comments."""
    pieces = []
    position = 0
    while (start := markdown.find("<!--", position)) != -1:
        end = markdown.find("-->", start + 4)
        if end == -1:
            break
        pieces.append(markdown[position:start])
        position = end + 3
    pieces.append(markdown[position:])
    return "".join(pieces)


def _plain(heading: str) -> str:
    return heading.replace("`", "").replace("**", "").strip()


def _unique(key: str, seen: set[str]) -> str:
    candidate, n = key, 2
    while candidate in seen:
        candidate, n = f"{key}-{n}", n + 1
    seen.add(candidate)
    return candidate


def explanation_markdown(explanation: dict[str, Any]) -> str:
    """An authored explanation as the mentor shows it: the answer, then its sources."""
    lines = []
    for source in explanation.get("sources") or []:
        authors = f", {source['authors']}" if source.get("authors") else ""
        year = f" ({source['year']})" if source.get("year") else ""
        title = f"[{source['title']}]({source['url']})" if source.get("url") else str(source.get("title", ""))
        lines.append(f"{title}{authors}{year}")
    answer = str(explanation["answer"]).strip()
    return answer + ("\n\nSources: " + "; ".join(lines) + "." if lines else "")


def explanation_passages(module: Module, module_url: str) -> list[PassageDraft]:
    """The module's authored explanations (explanations.yaml), searched by the questions they were written for."""
    return [
        PassageDraft(
            f"explain:{explanation['id']}",
            PassageKind.EXPLANATION,
            str(explanation["questions"][0]),
            f"{module_url}#concept",
            explanation_markdown(explanation),
            search_text="\n".join([*explanation["questions"][1:], *explanation.get("keywords", [])]),
        )
        for explanation in module.explanations or []
    ]


def module_passages(module: Module) -> list[PassageDraft]:
    """Every passage of ``module``, in page order. Reads only learner-visible text."""
    module_url = reverse("module", args=[module.slug])
    drafts: list[PassageDraft] = explanation_passages(module, module_url)
    concept = "\n\n".join(part for part in (module.summary, _shown(module.concept_md), module.why_it_matters and f"Why it matters: {module.why_it_matters}") if part)
    if concept.strip():
        drafts.append(PassageDraft("concept", PassageKind.CONCEPT, f"{module.title}: the idea", f"{module_url}#concept", concept))
    worked_example = _shown(module.worked_example_md)
    if worked_example.strip():
        drafts.append(
            PassageDraft("worked-example", PassageKind.WORKED_EXAMPLE, f"{module.title}: worked example", f"{module_url}#worked-example", worked_example)
        )
    seen: set[str] = set()
    for heading, body in split_sections(_shown(module.reference_md), (2,)):
        if heading is None:
            drafts.append(PassageDraft("ref", PassageKind.REFERENCE, "Quick reference", f"{module_url}#reference", body))
            continue
        slug = _unique(slugify(heading) or "block", seen)
        drafts.append(PassageDraft(f"ref:{slug}", PassageKind.REFERENCE, _plain(heading), f"{module_url}#ref-{slug}", body or heading))
    for n, line in enumerate(module.one_liners, start=1):
        drafts.append(PassageDraft(f"one-liner:{n}", PassageKind.ONE_LINER, "Remember", f"{module_url}#one-liners", str(line)))
    if module.sources:
        lines = []
        for source in module.sources:
            authors = f", {source.get('authors')}" if source.get("authors") else ""
            year = f" ({source.get('year')})" if source.get("year") else ""
            lines.append(f"- {source.get('kind', 'source')}: {source.get('title', '')}{authors}{year}")
        drafts.append(PassageDraft("sources", PassageKind.SOURCES, "Go further: sources", f"{module_url}#sources", "\n".join(lines)))
    rungs = Rung.objects.filter(module=module, current_version__isnull=False).select_related("current_version").order_by("order", "slug")
    for rung in rungs:
        version = rung.current_version
        assert version is not None
        rung_url = reverse("rung", args=[rung.slug])
        seen = set()
        # NOTE: instructions only. reference_code, hidden_tests and
        # wrong_solutions are never read here.
        for heading, body in split_sections(_shown(version.instructions_md), (2, 3)):
            if heading is None:
                text = "\n\n".join(part for part in (version.summary, body) if part)
                drafts.append(PassageDraft(f"rung:{rung.slug}", PassageKind.RUNG, version.title, rung_url, text, rung))
                continue
            section = _unique(slugify(heading) or "section", seen)
            drafts.append(
                PassageDraft(f"rung:{rung.slug}:{section}", PassageKind.RUNG, f"{version.title}: {_plain(heading)}", rung_url, body or heading, rung)
            )
    return drafts


def source_hash(module: Module) -> str:
    """A digest of everything the module's passages are cut from."""
    rungs = sorted(
        Rung.objects.filter(module=module, current_version__isnull=False).values_list("slug", "order", "current_version__content_hash")
    )
    payload: list[Any] = [
        INDEX_VERSION,
        module.slug,
        module.title,
        module.summary,
        module.why_it_matters,
        module.concept_md,
        module.worked_example_md,
        module.reference_md,
        module.one_liners,
        module.sources,
        module.explanations,
        rungs,
    ]
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
