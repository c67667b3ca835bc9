"""The shared lexical tokeniser (doclens/parsing/tokens.py): the overlap judge's content words and
BM25's terms, each with its own pattern, stop words and plural folding (docs/design.md,
"Maintained libraries and what stays hand-written")."""

from doclens.evaluators.rules import overlap
from doclens.parsing.tokens import DECIMAL_WORD, FUNCTION_WORDS, content_tokens, fold_plural, s_stem


def test_overlap_content_words():
    text = "The patient's coughs worsened; Temp 38.5, no glass shards, and she denies chills."
    assert overlap.content_words(text) == {
        "patient", "s", "cough", "worsened", "temp", "38.5", "glass", "shard", "chill"}  # "she" is a stop word
    # the judge reads words through the shared tokeniser: stop words and negation cues dropped
    assert overlap.content_words(text) == set(content_tokens(text, overlap._IGNORED, fold_plural, DECIMAL_WORD))
    assert "the" in FUNCTION_WORDS and "no" in overlap._IGNORED and "no" not in FUNCTION_WORDS


def test_bm25_terms():
    import pytest

    pytest.importorskip("bm25s", reason="BM25 terms use bm25s's stop words (the [retrieval] extra)")
    from doclens.retrieval import sparse

    stop = sparse._stopwords()
    assert sparse.tokenize("Coughs and flies, 5 mg", stop) == ["cough", "fly", "5", "mg"]
    assert sparse.s_stem is s_stem


def test_plural_folding_differs_by_design():
    # overlap drops a final s only; BM25's S stemmer also reads -ies and keeps -us / -is
    assert [fold_plural(w) for w in ("bodies", "sinus", "glass", "ribs", "bus")] == ["bodie", "sinu", "glass", "rib", "bus"]
    assert [s_stem(w) for w in ("bodies", "sinus", "glass", "ribs", "bus")] == ["body", "sinus", "glass", "rib", "bus"]
