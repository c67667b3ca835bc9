import pytest

from doclens.core.errors import InputError
from doclens.parsing.source_units import parse_source_units


def test_numbered_string():
    units = parse_source_units("[0] I have a cough. [1] It started Monday. ")
    assert [(u.index, u.text, u.speaker) for u in units] == [(0, "I have a cough.", None),
                                                             (1, "It started Monday.", None)]


def test_aci_turns_keep_speaker_apart():
    units = parse_source_units("[0][doctor] hi , andrew .\n[1][patient] hey , good to see you .")
    assert [(u.speaker, u.text) for u in units] == [("doctor", "hi , andrew ."), ("patient", "hey , good to see you .")]
    assert units[0].premise_text == "doctor: hi , andrew ."


def test_list_of_strings_with_and_without_markers():
    units = parse_source_units(["[0] first", "second", "[patient] third", "[7] fourth"])
    assert [(u.index, u.text, u.speaker) for u in units] == [
        (0, "first", None), (1, "second", None), (2, "third", "patient"), (3, "[7] fourth", None)]


def test_numbers_in_brackets_that_are_out_of_sequence_are_text():
    units = parse_source_units("[0] took [5] pills [1] then [1] more")
    assert [u.text for u in units] == ["took [5] pills", "then [1] more"]


def test_empty_and_none():
    assert parse_source_units(None) == []
    assert parse_source_units("  ") == []
    assert parse_source_units([]) == []


@pytest.mark.parametrize("bad", ["no markers at all", "text before [0] unit", "[1] starts at one"])
def test_unmarked_sources_are_refused(bad):
    with pytest.raises(InputError) as info:
        parse_source_units(bad)
    assert info.value.field == "source"


def test_real_aci_dialogue(shared_data):
    import json

    row = json.loads((shared_data / "aci_bench_test1.jsonl").read_text().splitlines()[0])
    units = parse_source_units(row["source"])
    assert len(units) > 50
    assert [u.index for u in units] == list(range(len(units)))
    assert {u.speaker for u in units} <= {"doctor", "patient", "patient_guest", "guest_family", "guest_clinician"}
    assert all(not u.text.startswith("[") for u in units)


def test_absurdly_long_unit_numbers_are_text_not_errors():
    from doclens.parsing.source_units import parse_source_units

    units = parse_source_units("[0] fever [" + "9" * 5000 + "] still unit zero [1] cough")
    assert [u.index for u in units] == [0, 1] and "still unit zero" in units[0].text


# ---- unnumbered sources numbered on request (--source-units; DocLens(source_units=...)) ---------
DIALOGUE = "[doctor] hi , anna . how are you ?\n[patient] i'm okay .\nit hurts a bit .\n\n[doctor] where ?"


def test_unnumbered_sources_numbered_by_lines_turns_or_sentences():
    from doclens.parsing.source_units import number_source

    assert [(u.index, u.speaker, u.text) for u in parse_source_units(DIALOGUE, units="turns")] == [
        (0, "doctor", "hi , anna . how are you ?"), (1, "patient", "i'm okay .\nit hurts a bit ."),
        (2, "doctor", "where ?")]
    assert [(u.speaker, u.text) for u in parse_source_units(DIALOGUE, units="lines")] == [
        ("doctor", "hi , anna . how are you ?"), ("patient", "i'm okay ."), (None, "it hurts a bit ."),
        ("doctor", "where ?")]
    assert [u.text for u in parse_source_units("Fever since Monday. No cough. Takes ibuprofen.",
                                               units="sentences")] == [
        "Fever since Monday.", "No cough.", "Takes ibuprofen."]
    # text before the first tag is a turn of its own (ACI-BENCH test-2 D2N131 starts so)
    assert [(u.speaker, u.text) for u in parse_source_units("hi , susan .\n[patient] good .", units="turns")] == [
        (None, "hi , susan ."), ("patient", "good .")]
    # detection: several lines → lines (never turns: an untagged line may be either); one paragraph → sentences
    assert number_source(DIALOGUE, "auto")[1] == "lines"
    assert number_source("Fever.\nNo cough.", "auto")[1] == "lines"
    assert number_source("Fever. No cough.", "auto")[1] == "sentences"
    # a source already numbered keeps its numbers (the prediction cites them), whatever is asked
    assert number_source("[0] Fever. [1] No cough.", "sentences")[1] == "given"
    assert [u.text for u in parse_source_units("[0] Fever. No rash. [1] No cough.", units="sentences")] == [
        "Fever. No rash.", "No cough."]
    with pytest.raises(InputError, match="speaker tag"):
        parse_source_units("no tags here at all", units="turns")
    with pytest.raises(InputError, match="--source-units"):  # the refusal says how to number
        parse_source_units(DIALOGUE)


def test_the_scorer_numbers_sources_with_a_notice_and_signs_how():
    from doclens import DocLens
    from doclens.evaluators.rules.overlap import OverlapEvaluator

    numbered = "\n".join(f"[{i}]{line}" for i, line in enumerate(line for line in DIALOGUE.split("\n") if line))
    row = {"id": "a", "prediction": "Patient is okay [1]. It hurts [2].", "reference": "Patient okay.",
           "reference_claims": ["Patient okay."], "prediction_claims": ["Patient is okay.", "It hurts."]}
    given = DocLens(OverlapEvaluator()).score([{**row, "source": numbered}], progress=False)
    with pytest.raises(InputError, match="--source-units"):
        DocLens(OverlapEvaluator()).score([{**row, "source": DIALOGUE}], progress=False)
    by_lines = DocLens(OverlapEvaluator(), source_units="lines").score([{**row, "source": DIALOGUE}],
                                                                       progress=False)
    assert by_lines.instances[0].scores == given.instances[0].scores
    assert "units:lines" in by_lines.signature and "units:" not in given.signature
    assert any("numbered" in w and "lines" in w for w in by_lines.warnings), by_lines.warnings
    detected = DocLens(OverlapEvaluator(), source_units="auto").score([{**row, "source": DIALOGUE}],
                                                                      progress=False)
    assert "units:auto" in detected.signature
    assert any("1 as lines" in w for w in detected.warnings), detected.warnings
    assert detected.instances[0].scores == given.instances[0].scores
