"""The Porter stems kept on disk (doclens/evaluators/rules/stems.py): the same stems as NLTK's
stemmer, each word stemmed by NLTK once across processes, a damaged file stemmed again."""

import json

import pytest

pytest.importorskip("nltk", reason="the Porter stems need the [clinical] extra (nltk)")

from nltk.stem.porter import PorterStemmer  # noqa: E402

from doclens.evaluators.rules.stems import FORMAT, PorterStems, _nltk_version  # noqa: E402

WORDS = ["running", "hypertension", "knees", "dying", "generously", "swelling", "running"]


def test_stems_equal_nltk_and_a_later_process_stems_none_again(tmp_path):
    path = tmp_path / "lexicons" / "porter-stems.json"
    first = PorterStems(path)
    assert [first(w) for w in WORDS] == [PorterStemmer().stem(w) for w in WORDS]
    assert first.computed == len(set(WORDS))  # "running" twice: stemmed once
    first.save()
    later = PorterStems(path)
    assert [later(w) for w in WORDS] == [PorterStemmer().stem(w) for w in WORDS]
    assert later.computed == 0  # every word from the file: NLTK not called
    assert later("fevers") == PorterStemmer().stem("fevers") and later.computed == 1


def test_save_keeps_another_processs_stems_and_a_damaged_file_is_stemmed_again(tmp_path):
    path = tmp_path / "stems.json"
    one, two = PorterStems(path), PorterStems(path)
    one("coughing"), two("wheezing")
    one.save(), two.save()
    assert set(json.loads(path.read_text())["data"]) == {"coughing", "wheezing"}  # sealed: format, version, sha256
    path.write_text("{not json")
    damaged = PorterStems(path)
    assert damaged("coughing") == PorterStemmer().stem("coughing") and damaged.computed == 1


def test_no_file_stems_every_word_with_nltk():
    stems = PorterStems(None)
    stems("coughing"), stems("coughing")
    stems.save()  # nothing to write to
    assert stems.computed == 1


def test_a_refused_file_is_written_again_sealed_even_when_nothing_new_was_stemmed(tmp_path, caplog):
    """A stems file not sealed with this user's key (written before the seal, or another user's) is
    warned about once and written again sealed at the next save, though the run stemmed nothing new:
    else a run whose readings all come from the analysis cache leaves it, and its warning, for good."""
    from doclens.evaluators.cache import read_sealed_json

    path = tmp_path / "stems.json"
    path.write_text(json.dumps({"format": FORMAT, "version": _nltk_version(), "data": {"coughing": "cough"}}))
    stems = PorterStems(path)
    assert "not sealed with this user's key" in caplog.text
    stems.save()  # nothing stemmed in this process
    assert read_sealed_json(path, FORMAT, _nltk_version()) == {}  # sealed now: read with no warning
