import pytest

from doclens.statements import (inherit_citations, is_header_line, parse_citation_group, parse_citations,
                                parse_statements, strip_citations)


def texts_and_ids(prediction, **kw):
    return [(s.text, s.citations) for s in parse_statements(prediction, **kw)]


@pytest.mark.parametrize("group, ids", [
    ("[3]", [3]), ("[3, 4]", [3, 4]), ("[3,4,3]", [3, 4]), ("[3-5]", [3, 4, 5]), ("[3–5]", [3, 4, 5]),
    ("[ 7 ]", [7]), ("[2, 5-6]", [2, 5, 6]), ("[5-3]", [5, 3]),
])
def test_citation_groups(group, ids):
    assert parse_citation_group(group) == ids


def test_citation_attaches_before_or_after_the_period():
    assert texts_and_ids("Fever [3]. Cough. [4] Rash [1][2].") == [
        ("Fever.", [3]), ("Cough.", [4]), ("Rash.", [1, 2])]


def test_grouped_forms_and_deduplication():
    assert texts_and_ids("Fever [3][4][3]. Cough [3, 4]. Rash [3-5].") == [
        ("Fever.", [3, 4]), ("Cough.", [3, 4]), ("Rash.", [3, 4, 5])]


def test_citations_inside_a_sentence_belong_to_it():
    assert texts_and_ids("Fever [1] and cough [2] since Monday.") == [("Fever and cough since Monday.", [1, 2])]


def test_numbers_and_list_markers_neither_split_nor_cite():
    got = texts_and_ids("1. The mass is 1.2 cm [0]. Murmur 2/6 noted [2].\n2) BP 120/80 [1].\n• Dr. Smith saw him.")
    assert got == [("The mass is 1.2 cm.", [0]), ("Murmur 2/6 noted.", [2]), ("BP 120/80.", [1]),
                   ("Dr. Smith saw him.", [])]


def test_abbreviations_do_not_split():
    assert texts_and_ids("Metformin 500 mg b.i.d. for diabetes [1]. Seen by Dr. Lee, e.g. for follow up.") == [
        ("Metformin 500 mg b.i.d. for diabetes.", [1]), ("Seen by Dr. Lee, e.g. for follow up.", [])]


def test_lowercase_continuation_does_not_split():
    assert texts_and_ids("Temp 38.5 C. noted today.") == [("Temp 38.5 C. noted today.", [])]


def test_header_only_lines_carry_nothing():
    note = "CHIEF COMPLAINT\nKnee pain [0].\nHPI:\n## Plan\n**Assessment:**\nRest [1]."
    assert texts_and_ids(note) == [("Knee pain.", [0]), ("Rest.", [1])]


@pytest.mark.parametrize("line, header", [
    ("CHIEF COMPLAINT", True), ("HPI:", True), ("Assessment and Plan:", True), ("## Results", True),
    ("**PLAN**", True), ("Fever.", False), ("Upper respiratory infection.", False), ("BP: 120/80", False),
    ("• Respiratory: Scattered rhonchi bilaterally.", False), ("", False), ("COVID-19 NEGATIVE [2]", False),
])
def test_is_header_line(line, header):
    assert is_header_line(line) is header


def test_lone_citation_line_attaches_to_previous_statement():
    assert texts_and_ids("Fever for two days.\n[3]") == [("Fever for two days.", [3])]


def test_markers_removed_from_judged_text():
    assert strip_citations("Fever [3] , cough [4-5].") == "Fever, cough."
    assert parse_citations("a [1] b [2, 1] c") == [1, 2]


def test_brackets_that_are_not_citations_stay():
    assert texts_and_ids("Dose [10 mg] given [1].") == [("Dose [10 mg] given.", [1])]


def test_lettered_list_markers_and_initials():
    assert texts_and_ids("a. Rest [1].\nb) Ice [2].\nA. Smith reviewed [3].") == [
        ("Rest.", [1]), ("Ice.", [2]), ("A. Smith reviewed.", [3])]


def test_section_and_numbering():
    statements = parse_statements("A [0]. B.", section="subjective", start_index=5)
    assert [(s.index, s.section) for s in statements] == [(5, "subjective"), (6, "subjective")]


def test_empty_prediction():
    assert parse_statements("") == []
    assert parse_statements("   \n\n") == []


def test_inherit_borrows_the_next_cited_statement():
    statements = parse_statements("Aa. Bb [2]. Cc. Dd [4, 5]. Ee.")
    inherited = inherit_citations(statements)
    assert [(s.text, s.citations, s.inherited) for s in inherited] == [
        ("Aa.", [2], True), ("Bb.", [2], False), ("Cc.", [4, 5], True), ("Dd.", [4, 5], False), ("Ee.", [], False)]
    assert statements[0].citations == []  # input untouched


def test_strip_citations_keeps_lines():
    # regression: collapsing newlines broke section splitting of cited notes
    assert strip_citations("HPI\nFever [1] .\n\nPLAN\nRest [2].") == "HPI\nFever.\n\nPLAN\nRest."
