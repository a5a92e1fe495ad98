from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from core import sections
from mentor import search, services
from mentor.management.commands.mentor_eval import DEFAULT_QUESTIONS
from mentor.models import ModuleIndex, Passage
from mentor.text import query_terms, stem, terms

pytestmark = pytest.mark.django_db


def test_the_question_set_finds_its_passage_in_the_top_three(module):
    out = StringIO()
    call_command("mentor_eval", "--json", "--questions", str(DEFAULT_QUESTIONS), stdout=out)
    result = json.loads(out.getvalue())
    assert result["questions"] >= 20
    assert result["top3_hit_rate"] >= 0.8, result["misses"]
    assert result["calculator_questions"] >= 10
    assert result["calculator_accuracy"] == 1.0, result["calculator_misses"]


def test_a_wrong_expected_number_is_reported_as_a_miss(module, tmp_path):
    questions = tmp_path / "questions.yaml"
    questions.write_text(
        "module: inference-and-serving\nquestions: []\ncalculations:\n"
        "  - {q: 'KV cache of Llama-2-7B at 4096 tokens, batch 1, fp16', bytes: 2147483648}\n"
        "  - {q: 'KV cache of Llama-2-7B at 4096 tokens, batch 1, fp16', bytes: 2000000000}\n"
        "  - {q: 'What is a KV cache?', bytes: 1}\n"
    )
    out = StringIO()
    call_command("mentor_eval", "--json", "--questions", str(questions), stdout=out)
    result = json.loads(out.getvalue())
    assert result["calculator_accuracy"] == 0.333
    assert [miss["got_bytes"] for miss in result["calculator_misses"]] == [2147483648, None]


def test_every_rung_of_the_module_is_indexed(module):
    search.ensure_index(module)
    indexed = set(Passage.objects.filter(module=module, rung__isnull=False).values_list("rung__slug", flat=True))
    assert indexed == set(module.rungs.filter(current_version__isnull=False).values_list("slug", flat=True))
    assert Passage.objects.filter(module=module, key__startswith="one-liner:").count() == len(module.one_liners)


def test_passages_link_to_the_module_page_or_the_rung_page(module):
    search.ensure_index(module)
    for passage in Passage.objects.filter(module=module):
        if passage.rung is not None:
            assert passage.url == f"/rungs/{passage.rung.slug}/"
        else:
            assert passage.url.startswith(f"/modules/{module.slug}/#")


def test_the_quick_reference_is_cut_at_its_headings(module):
    module.reference_md = "Intro line.\n\n## KV cache\nTwo times layers.\n\n```python\n## not a heading\n```\n\n## Paged attention\nBlocks of 16 tokens."
    module.save()
    search.ensure_index(module)
    refs = {p.key: p for p in Passage.objects.filter(module=module, kind="reference")}
    assert set(refs) == {"ref", "ref:kv-cache", "ref:paged-attention"}
    assert refs["ref:kv-cache"].url.endswith("#ref-kv-cache")
    assert "## not a heading" in refs["ref:kv-cache"].text
    assert sections.reference_anchor("Paged attention") == "ref-paged-attention"


def test_the_index_is_rebuilt_when_the_module_text_changes(module):
    search.ensure_index(module)
    built_at = ModuleIndex.objects.get(module=module).built_at
    search.ensure_index(module)
    assert ModuleIndex.objects.get(module=module).built_at == built_at  # unchanged text: no rebuild
    assert not search.search(module, "zanzibar")
    module.concept_md = "Think of the KV cache as Zanzibar's spice store."
    module.save()
    hits = search.search(module, "zanzibar")
    assert hits and hits[0].passage.key == "concept"


def test_a_question_with_no_known_word_finds_nothing(module):
    assert search.search(module, "the of and") == []
    assert services.passages_answer([]).startswith("The module does not seem to cover this")


def test_the_rung_being_worked_on_is_preferred_on_a_tie(module):
    search.ensure_index(module)
    rung = module.rungs.get(slug="paged-attention")
    hits = search.search(module, "worked example", rung=rung)
    assert hits[0].passage.rung_id == rung.pk


def test_the_stemmer_meets_word_forms_and_spellings():
    assert stem("paging") == stem("paged") == stem("pages") == "page"
    assert stem("quantization") == stem("quantized")
    assert terms("quantisation") == terms("quantization")
    assert terms("PagedAttention num_key_value_heads") == ["page", "attent", "num", "key", "valu", "head"]
    assert "fp16" in terms("fp16 weights")
    weights = query_terms("how big is the GQA cache")
    assert weights[stem("gqa")] == 1.0 and weights[stem("grouped")] == 0.5


def test_excerpts_start_at_the_paragraph_that_matches():
    text = "First paragraph about nothing.\n\nSecond one explains **copy-on-write** of blocks."
    assert search.excerpt(text, query_terms("copy on write")).startswith("Second one explains copy-on-write")
