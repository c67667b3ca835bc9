"""Lexical tokens for the word-matching parts of the package: the ``overlap`` judge's content words
and BM25's terms (:mod:`doclens.retrieval.sparse`) come from :func:`content_tokens`, each with its
own token pattern, stop words and plural folding, kept as they were so verdicts and rankings stay
equal (docs/design.md, "Maintained libraries and what stays hand-written", says why the two are
not one list and one stemmer). ``clinical-rules`` reads words with spaCy and lemmas instead
(:mod:`doclens.evaluators.rules.clinical_rules`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

#: overlap's tokens: runs of letters and digits, a decimal kept whole ("38.5")
DECIMAL_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
#: BM25's tokens: runs of word characters
WORD = re.compile(r"\w+")

#: The package's one list of English function words (articles, pronouns, auxiliaries, prepositions,
#: conjunctions, quantifiers), which its hand-written word matching leaves out: ``overlap``'s stop
#: words (negation cues are dropped beside them, see overlap.py) and the core of ``clinical-rules``'
#: (:data:`doclens.evaluators.rules.words.STOP_WORDS`, which adds 31 more function words, written
#: there with why overlap keeps without them). BM25 keeps bm25s's own 33 (retrieval/sparse.py;
#: docs/design.md, "Lexical tokens", says why).
FUNCTION_WORDS = frozenset("""a an the and or of to in on at for with by from as is are was were be been being
this that these those it its he she they his her their him them we our you your i me my has have had do does did
will would shall should can could may might must also than then there here which who whom whose what when where
while about into over under after before during per very more most some any each other such only same so""".split())


def fold_plural(token: str) -> str:
    """overlap's plural folding: a final ``s`` dropped from words of four letters or more, never after ``ss``."""
    return token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith("ss") else token


def s_stem(token: str) -> str:
    """Harman's S stemmer (1991), BM25's: ``-ies`` → ``-y``, ``-es`` → ``-e``, ``-s`` dropped
    (never after ``-us``/``-ss``/``-is``)."""
    if len(token) > 3 and token.endswith("ies") and not token.endswith(("eies", "aies")):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("es") and not token.endswith(("aes", "ees", "oes")):
        return token[:-1]
    if len(token) > 2 and token.endswith("s") and not token.endswith(("us", "ss", "is")):
        return token[:-1]
    return token


def content_tokens(text: str, stopwords: Collection[str], reduce: Callable[[str], str], pattern: re.Pattern = WORD
                   ) -> list[str]:
    """The lower-cased ``pattern`` tokens of ``text`` that are not ``stopwords``, each ``reduce``-d,
    in order. Read with ``finditer``: a 10 MB text never becomes a list of millions of tokens
    before its stop words are dropped."""
    return [reduce(token) for token in map(re.Match.group, pattern.finditer(text.lower())) if token not in stopwords]
