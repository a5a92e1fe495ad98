"""rung.yaml's `gpu: no | preferred | required`, and what a job of each gets."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from exercises.constants import GpuNeed
from exercises.jobs import job_for
from exercises.schema import RungMeta

BASE = {"slug": "a-rung", "title": "A rung", "minutes": 5, "difficulty": "easy", "hidden_tests": {}}


@pytest.mark.parametrize(
    ("written", "read"),
    [("no", GpuNeed.NO), ("preferred", GpuNeed.PREFERRED), ("required", GpuNeed.REQUIRED), (False, GpuNeed.NO), (True, GpuNeed.REQUIRED)],
)
def test_each_spelling_reads_as_one_need(written, read):
    assert RungMeta.model_validate({**BASE, "gpu": written}).gpu == read


def test_no_gpu_key_means_no():
    assert RungMeta.model_validate(BASE).gpu == GpuNeed.NO


@pytest.mark.parametrize("bad", ["sometimes", "GPU", 1, "yes please"])
def test_anything_else_is_refused_naming_the_choices(bad):
    with pytest.raises(ValidationError, match="gpu must be one of no, preferred, required"):
        RungMeta.model_validate({**BASE, "gpu": bad})


@pytest.mark.parametrize(("need", "wants"), [("no", False), ("preferred", True), ("required", True), (False, False), (True, True)])
def test_a_job_asks_for_a_gpu_unless_the_rung_says_no(need, wants):
    content = SimpleNamespace(visible_tests="def test_a(solution): pass\n", hidden_tests="", limits={}, gpu=need, reference="")
    assert job_for(content, "run", "x = 1\n").limits.gpu is wants


def test_the_shipped_gpu_rung_is_preferred_and_names_its_gpu_only_tests():
    from pathlib import Path

    from exercises.loader import read_rung

    root = Path(__file__).resolve().parents[2] / "exercises/llm-systems-frontier/inference-and-serving/rungs/07-paged-attention-decode"
    rung = read_rung(root)
    assert rung.meta.gpu == GpuNeed.PREFERRED
    gpu_only = [name for name, test in rung.meta.hidden_tests.items() if test.description.startswith("GPU only")]
    assert gpu_only == ["test_gpu_half_precision_on_the_device", "test_gpu_never_copies_the_whole_cache"]
    assert len(rung.wrong_solutions) >= 3
