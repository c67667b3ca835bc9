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
