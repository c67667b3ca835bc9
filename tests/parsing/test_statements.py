import pytest

from doclens.core.types import Statement
from doclens.parsing.statements import (
    OVERSIZED_ID,
    inherit_citations,
    is_header_line,
    parse_citation_group,
    parse_citations,
    parse_statements,
    sentence_spans,
    split_sentences,
    strip_citations,
    whole_statement,
)


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


def test_a_sentence_may_start_in_lower_case_after_a_full_stop():
    assert texts_and_ids("Temp 38.5 C. noted today.") == [("Temp 38.5 C.", []), ("noted today.", [])]
    assert texts_and_ids("Pain improved [1]. no fever today [2].") == [("Pain improved.", [1]),
                                                                      ("no fever today.", [2])]
    # but not after an abbreviation or an initial
    assert texts_and_ids("Seen by Dr. lee, e.g. twice; A. Smith agreed.") == [
        ("Seen by Dr. lee, e.g. twice; A. Smith agreed.", [])]


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


def test_letters_and_digits_of_any_script_are_content():
    assert texts_and_ids("У пациента кашель [0]. 患者发烧[1]。") == [("У пациента кашель.", [0]), ("患者发烧。", [1])]
    assert texts_and_ids("Fever [0]. ... [1] — .") == [("Fever.", [0, 1])]  # no content: ids go to the one before


def test_wide_terminators_end_sentences_without_spaces():
    assert texts_and_ids("患者发烧。[1]咳嗽！[2]头痛？好的") == [("患者发烧。", [1]), ("咳嗽！", [2]), ("头痛？", []),
                                                         ("好的", [])]


def test_no_is_an_abbreviation_only_before_a_number():
    assert texts_and_ids("Narcotic pain medication: No. Her pain is 5/10 [3].") == [
        ("Narcotic pain medication: No.", []), ("Her pain is 5/10.", [3])]
    assert texts_and_ids("Take tablet No. 5 daily [1]. Done.") == [("Take tablet No. 5 daily.", [1]), ("Done.", [])]


def test_list_markers_are_stripped_wherever_a_sentence_starts():
    assert texts_and_ids("Step one done [1]. 2. Next item [2]. b) Third [3]. • Fourth.") == [
        ("Step one done.", [1]), ("Next item.", [2]), ("Third.", [3]), ("Fourth.", [])]
    # a numbered list after a colon stays one sentence
    assert texts_and_ids("Plan: 1. Start aspirin.") == [("Plan: 1. Start aspirin.", [])]


@pytest.mark.parametrize("prediction", ["Fever [3]. Cough.", "Fever. [3] Cough.", "Fever.[3] Cough.",
                                        "Fever [3] . Cough.", "Fever.\n[3]\nCough."])
def test_citation_attaches_to_the_sentence_it_closes(prediction):
    assert texts_and_ids(prediction) == [("Fever.", [3]), ("Cough.", [])]


def test_numbers_never_split():
    assert texts_and_ids("Lesion 1.2 cm and 0.5 mm [1]. Dose 2.5mg.") == [("Lesion 1.2 cm and 0.5 mm.", [1]),
                                                                        ("Dose 2.5mg.", [])]


def test_absurd_citation_ids_are_invalid_not_errors():
    huge = "9" * 5000
    assert texts_and_ids(f"Fever [{huge}]. Cough [{huge}-3].") == [("Fever.", [OVERSIZED_ID]),
                                                                  ("Cough.", [OVERSIZED_ID, 3])]
    assert parse_citation_group("[1-" + "9" * 30 + "]") == [1, OVERSIZED_ID]


def test_deeply_nested_brackets_do_not_recurse():
    text = "Fever " + "[" * 100_000 + "]" * 100_000 + " [2]."
    statements = parse_statements(text)
    assert len(statements) == 1 and statements[0].citations == [2]


def test_one_long_line_is_split_completely():
    line = " ".join(f"Finding number {i} noted [{i % 7}]." for i in range(4000))
    statements = parse_statements(line)
    assert len(statements) == 4000
    assert statements[1234].text == "Finding number 1234 noted." and statements[1234].citations == [1234 % 7]


def test_long_runs_of_spaces_and_dots():
    assert texts_and_ids("Fever" + " " * 50_000 + "x.") == [("Fever x.", [])]
    assert texts_and_ids("." * 50_000) == []


def test_spans_cover_the_line_and_split_sentences_keeps_every_token():
    line = "1. Dr. Smith saw him [2]. no fever. BP 120/80."
    spans = sentence_spans(line)
    assert spans[0][0] == 0 and spans[-1][2] == len(line)
    assert all(a[2] == b[0] for a, b in zip(spans, spans[1:]))
    assert split_sentences(line + "\nPLAN") == ["1. Dr. Smith saw him [2].", "no fever.", "BP 120/80.", "PLAN"]


def test_whole_statement_reads_every_citation():
    [statement] = whole_statement("What dose of aspirin [0]? For how long [2][0]?")
    assert statement.text == "What dose of aspirin? For how long?" and statement.citations == [0, 2]
    assert whole_statement(" [1] ") == []


def test_inherit_stays_inside_a_section():
    statements = [Statement(0, "A.", [], "subjective"), Statement(1, "B.", [], "subjective"),
                  Statement(2, "C.", [4], "objective_exam"), Statement(3, "D.", [], "objective_exam"),
                  Statement(4, "E.", [], "assessment_and_plan"), Statement(5, "F.", [6], "assessment_and_plan")]
    within = inherit_citations(statements)
    assert [(s.citations, s.inherited) for s in within] == [
        ([], False), ([], False), ([4], False), ([], False), ([6], True), ([6], False)]
    across = inherit_citations(statements, within_section=False)
    assert [s.citations for s in across] == [[4], [4], [4], [6], [6], [6]]


def test_an_ellipsis_before_lower_case_is_a_pause():
    assert texts_and_ids("i have ... i mean , chronic urol … urolithiasis [2]. Then ... Next.") == [
        ("i have... i mean, chronic urol … urolithiasis.", [2]), ("Then...", []), ("Next.", [])]
    assert texts_and_ids("walking to ... 30 minutes a day.") == [("walking to... 30 minutes a day.", [])]


def test_bracketed_numbers_that_are_no_citation_in_context_are_reported_not_cited():
    """A group that opens a sentence (LED writes "[2]Regarding …") or stands before a unit
    ("[2] weeks") cites nothing; it is kept as stray text with the word after it."""
    statements = parse_statements("Pain for [2] weeks [4].\n[2]Regarding your psoriasis, continue cream.\n"
                                  "Fever [1] and cough [2] since Monday.")
    assert [(s.citations, s.stray) for s in statements] == [
        ([4], ["[2] weeks"]), ([], ["[2]Regarding"]), ([1, 2], [])]
    # the judged text is unchanged: markers are removed as before
    assert [s.text for s in statements][:2] == ["Pain for weeks.", "Regarding your psoriasis, continue cream."]


@pytest.mark.parametrize("prediction, units, consistent", [
    ("Fever for two days [0]. No cough [1][2].", 3, True),
    ("Alpha [0, 9].", 4, True),  # an invalid id beside a valid one: a citation that fails, not a stray number
    ("Fever [0]. Cough. Rash. Pain.", 4, True),  # one statement of four cites: the paper's rule scores the rest 0
    ("[2]The onset was sudden. Pain in both knees.", 30, False),  # opens a fragment: LED
    ("Pain since Monday [5]=Neurological findings.", 30, False),  # followed by "=": no marker
    ("Follow up as needed [4][6],[7]]Depression noted.", 30, False),  # "]]"
    ("Visually impaired,[1], chronic cough [2],[3]).", 30, False),  # after a comma: no marker
    ("Fever. Cough. Rash. Pain. Swelling [3].", 30, False),  # one cited fragment of five statements
    ("Fever [302]. Cough [3444].", 30, False),  # no cited id names a unit
])
def test_a_bracketed_number_is_a_citation_only_in_a_consistent_style(prediction, units, consistent):
    from doclens.parsing.statements import citation_style

    assert citation_style(prediction, parse_statements(prediction), units).consistent is consistent
