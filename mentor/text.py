"""Turning text into search terms: tokens, stop words, a stemmer and a small
table of the module's vocabulary.

Both the passages and the questions go through ``terms()``, so "paged",
"paging" and "pages" all meet at "page". The stemmer is Snowball's English
(snowballstemmer); changing it changes every stored term, so
``mentor.constants.INDEX_VERSION`` moves with it.
"""

from __future__ import annotations

import functools
import threading

import snowballstemmer

from core.constants import MARKDOWN_MAX_CHARS
from core.untrusted_patterns import untrusted

_READS = "a learner's question or an author's passage"
_CAMEL = untrusted(r"(?<=[a-z])(?=[A-Z])", max_chars=MARKDOWN_MAX_CHARS, reads=_READS)
_LATEX_COMMAND = untrusted(r"\\[A-Za-z]+", max_chars=MARKDOWN_MAX_CHARS, reads=_READS)
_WORD = untrusted(r"[a-z0-9]+", max_chars=MARKDOWN_MAX_CHARS, reads=_READS)

STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before being below between
    both but by can could did do does doing done down during each either else etc even ever every few for from
    further get gets getting give given go goes had has have having he her here hers him his how however i if in
    into is it its itself just let lets like ll may me might mine more most much must my need needs no nor not now
    of off on once one only or other ought our ours out over own per please re really s same say says see seem
    she should so some still such t tell than that the their theirs them then there these they thing things this
    those though through thus to too under until up upon us use used uses using ve very via was way we well were
    what whats when where whether which while who whom whose why will with within without would yes yet you your
    yours explain explained mean means meaning exactly actually happen happens module
    """.split()
)

# British spellings meet the American ones the catalog uses.
_SPELLING = {
    "quantise": "quantize", "quantised": "quantized", "quantising": "quantizing", "quantisation": "quantization",
    "dequantise": "dequantize", "dequantisation": "dequantization", "normalise": "normalize", "normalised": "normalized",
    "normalisation": "normalization", "optimise": "optimize", "optimisation": "optimization", "behaviour": "behavior",
}

# A question may name an idea in words the passages do not use. Each entry
# adds the listed words to the question (at half weight, see services).
EXPANSIONS: dict[str, tuple[str, ...]] = {
    "kv": ("key", "value"),
    "gqa": ("grouped", "query", "group"),
    "mqa": ("multi", "query", "shared", "single"),
    "mha": ("multi", "head"),
    "vram": ("memory", "gpu"),
    "hbm": ("memory", "bandwidth"),
    "ram": ("memory",),
    "big": ("size", "bytes"),
    "large": ("size", "bytes"),
    "huge": ("size", "bytes"),
    "small": ("size",),
    "fit": ("fits", "max"),
    "precision": ("dtype", "bits"),
    "float16": ("fp16",),
    "half": ("fp16",),
    "bfloat16": ("bf16",),
    "float32": ("fp32",),
    "8bit": ("int8",),
    "4bit": ("int4",),
    "fp8": ("int8",),
    "cow": ("copy", "write"),
    "refcount": ("reference", "count"),
    "refcounts": ("reference", "count"),
    "oom": ("out", "blocks", "memory"),
    "faster": ("speed", "latency"),
    "speedup": ("speed", "faster"),
    "slow": ("latency", "memory", "bandwidth"),
    "draft": ("speculative",),
    "speculation": ("speculative", "draft"),
    "verify": ("accept", "reject"),
    "lossless": ("exactly", "distribution", "target"),
    "exact": ("exactly", "distribution"),
    "tps": ("throughput",),
    "scheduling": ("batching",),
    "scheduler": ("batching",),
    "vllm": ("paged", "pagedattention", "block"),
    "paging": ("paged", "block"),
    "fragmentation": ("waste", "wasted", "block"),
    "prompt": ("prefill",),
    "autoregressive": ("decode",),
    "generation": ("decode",),
    "generating": ("decode",),
    "bandwidth": ("memory", "bound"),
    "rounding": ("round",),
    "zero": ("zeros",),
    "scale": ("scales",),
    "heads": ("head",),
}

# Snowball's English stemmer (Porter's own revision of his 1980 algorithm),
# from a maintained library rather than written out here.
# NOTE: a stemmer object keeps the word it works on; threads share it under the lock.
_STEMMER = snowballstemmer.stemmer("english")
_STEMMER_LOCK = threading.Lock()


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Stem one lower-case word; words with digits and short words stay as they are."""
    if len(word) <= 2 or not word.isalpha():
        return word
    with _STEMMER_LOCK:
        return str(_STEMMER.stemWord(word))


def words(text: str) -> list[str]:
    """Lower-case words of ``text``: camelCase and snake_case split, LaTeX commands dropped."""
    text = _LATEX_COMMAND.sub(" ", text)
    text = _CAMEL.sub(" ", text).lower()
    return [_SPELLING.get(word, word) for word in _WORD.findall(text)]


def terms(text: str) -> list[str]:
    """The search terms of ``text``: stop words and one-letter words dropped, the rest stemmed."""
    return [stem(word) for word in words(text) if len(word) > 1 and word not in STOP_WORDS]


def query_terms(text: str) -> dict[str, float]:
    """A question's terms with weights: its own words 1.0, expansions 0.5."""
    weights: dict[str, float] = {}
    for word in words(text):
        if len(word) <= 1 or word in STOP_WORDS:
            continue
        weights[stem(word)] = 1.0
        for extra in EXPANSIONS.get(word, ()):
            weights.setdefault(stem(extra), 0.5)
    return weights


def normalise_question(text: str) -> str:
    """The form questions are grouped by in the instructors' view."""
    return " ".join(_WORD.findall(text.lower()))[:1000]
