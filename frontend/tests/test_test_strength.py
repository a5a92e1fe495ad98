"""The test-strength line (issue 58, item 4): on a rung's ladder entry and in its
workspace when its version has measured figures, and nowhere when it has none."""

from __future__ import annotations

import re
from html import escape
from typing import Any

from exercises.models import Rung
from exercises.strength import record_strength
from grader import messages

FIGURES = {"named": 23, "generated": 440, "wrong": 16, "wrong_caught": 16, "alternatives": 2, "alternatives_passing": 2, "mutation_score": 0.996}
LINE = ("Hidden tests: 23 named, 440 generated cases. They catch 16 of 16 known mistakes and 99% of small changes to the reference "
        "(mutants), and pass 2 of 2 independent correct solutions.")


def test_the_line_shows_where_figures_were_measured_and_nowhere_else(catalog: Any, client: Any, learner: Any) -> None:
    measured = Rung.objects.select_related("current_version").get(slug="kv-cache-size")
    assert measured.current_version is not None and record_strength(measured.current_version, FIGURES)
    assert messages.test_strength(FIGURES) == LINE  # rounded down: 99.6% is not 100%
    client.force_login(learner)

    page = client.get("/modules/inference-and-serving/").content.decode()
    shown = re.findall(r'<p class="meta test-strength" data-rung="([^"]+)">([^<]*)</p>', page)
    assert shown == [("kv-cache-size", escape(LINE))]  # the other rungs have no figures: no claim

    workspace = client.get("/rungs/kv-cache-size/").content.decode()
    assert f'<p class="meta test-strength" id="test-strength">{escape(LINE)}</p>' in workspace
    assert "test-strength" not in client.get("/rungs/quantization-arithmetic/").content.decode()

    # Figures with one missing (say, mutants skipped) make no claim either.
    assert record_strength(measured.current_version, {**FIGURES, "mutation_score": None}) is False
    measured.current_version.strength = {**FIGURES, "mutation_score": None}
    measured.current_version.save(update_fields=["strength"])
    assert "test-strength" not in client.get("/rungs/kv-cache-size/").content.decode()
