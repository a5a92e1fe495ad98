"""Vocabularies and fixed numbers of the mentor."""

from __future__ import annotations

from django.db import models

# Bump when the way passages are cut or their terms are computed changes:
# every module's index is then rebuilt on its next question.
INDEX_VERSION = 4  # 2: HTML comments are left out, as on the page; 3: Snowball English stems; 4: authored explanations

QUESTION_MAX_CHARS = 1000
# How many passages a question is answered from.
TOP_K = 3
# Characters of a passage shown under an answer, and sent to the model.
EXCERPT_CHARS = 500
# A single paragraph is shown whole up to this many characters (never cut inside a formula).
EXCERPT_MAX_CHARS = 1500
CONTEXT_CHARS_PER_PASSAGE = 4000

# BM25 parameters (the usual ones) and the extra weight of a passage's title.
BM25_K1 = 1.2
BM25_B = 0.75
TITLE_REPEAT = 2
# An authored explanation is put first (it is the answer) when its score is at
# least this share of the best passage's: a question it was written for.
EXPLANATION_FIRST_SHARE = 0.8


class PassageKind(models.TextChoices):
    CONCEPT = "concept", "Concept"
    WORKED_EXAMPLE = "worked_example", "Worked example"
    REFERENCE = "reference", "Quick reference"
    ONE_LINER = "one_liner", "One-liner"
    SOURCES = "sources", "Go further"
    RUNG = "rung", "Rung instructions"
    EXPLANATION = "explanation", "Explanation"
