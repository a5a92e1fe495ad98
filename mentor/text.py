"""Turning text into search terms: tokens, stop words, a Porter stemmer and a
small table of the module's vocabulary.

Both the passages and the questions go through ``terms()``, so "paged",
"paging" and "pages" all meet at "page". The stemmer is M. F. Porter's 1980
algorithm, written out here so the mentor needs no extra dependency.
"""

from __future__ import annotations

from exercises.constants import MARKDOWN_MAX_CHARS
from frontend.untrusted_patterns import untrusted

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

_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"), ("bli", "ble"),
    ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"),
    ("ator", "ate"), ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"),
    ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"),
)
_STEP3 = (("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", ""))
_STEP4 = sorted(
    ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate",
     "iti", "ous", "ive", "ize"),
    key=len,
    reverse=True,
)


def _is_consonant(word: str, i: int) -> bool:
    char = word[i]
    if char in "aeiou":
        return False
    if char == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant runs, [C](VC){m}[V]."""
    n, i, m = len(stem), 0, 0
    while i < n and _is_consonant(stem, i):
        i += 1
    while i < n:
        while i < n and not _is_consonant(stem, i):
            i += 1
        if i >= n:
            break
        while i < n and _is_consonant(stem, i):
            i += 1
        m += 1
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _is_consonant(stem, i) for i in range(len(stem)))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _is_consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    return (
        len(word) >= 3
        and _is_consonant(word, len(word) - 3)
        and not _is_consonant(word, len(word) - 2)
        and _is_consonant(word, len(word) - 1)
        and word[-1] not in "wxy"
    )


def _replace(word: str, rules: tuple[tuple[str, str], ...] | list[tuple[str, str]], min_measure: int) -> str:
    for suffix, replacement in rules:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + replacement if _measure(stem) > min_measure else word
    return word


def stem(word: str) -> str:
    """Porter-stem one lower-case word; words with digits and short words stay as they are."""
    if len(word) <= 2 or not word.isalpha():
        return word
    # Step 1a: plurals.
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    # Step 1b: -ed, -ing.
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    else:
        for suffix in ("ed", "ing"):
            if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
                word = word[: -len(suffix)]
                if word.endswith(("at", "bl", "iz")):
                    word += "e"
                elif _double_consonant(word) and word[-1] not in "lsz":
                    word = word[:-1]
                elif _measure(word) == 1 and _cvc(word):
                    word += "e"
                break
    # Step 1c: y -> i.
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    word = _replace(word, _STEP2, 0)
    word = _replace(word, _STEP3, 0)
    # Step 4: drop a suffix when m > 1.
    for suffix in _STEP4:
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            if _measure(base) > 1 and (suffix != "ion" or base.endswith(("s", "t"))):
                word = base
            break
    # Step 5: a final -e, a final double l.
    if word.endswith("e"):
        base = word[:-1]
        if _measure(base) > 1 or (_measure(base) == 1 and not _cvc(base)):
            word = base
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


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
