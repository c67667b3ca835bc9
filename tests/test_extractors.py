"""The offline ``clauses`` extractor: claims a clinician would count (docs/design.md §4, "Judging real notes")."""

from doclens.extraction.extractors import (
    ClauseExtractor,
    clinician_claims,
    is_bare_subheader,
    split_enumeration,
    split_keyed,
)


def test_enumerations_split_with_the_words_that_introduce_them():
    assert split_enumeration("He has a past medical history significant for depression, type 2 diabetes, and "
                             "hypertension.") == [
        "He has a past medical history significant for depression.",
        "He has a past medical history significant for type 2 diabetes.",
        "He has a past medical history significant for hypertension."]
    # the negation stays with each item
    assert split_enumeration("She denies fever, chills, or weight loss.") == [
        "She denies fever.", "She denies chills.", "She denies weight loss."]
    # what follows the list stays with its last item
    assert split_enumeration("A history of gout, psoriasis, and asthma who presents for follow-up.")[-1] == \
        "A history of asthma who presents for follow-up."


def test_what_is_not_a_list_stays_whole():
    for sentence in ("She has been walking, exercising, and doing yoga, which has helped.",
                     "If he has fever, chills, or rash, he will call.",
                     "Bilateral pulling of ears, no sore throat or hoarseness.",
                     "I have also advised him to utilize ice, a heating pad, IcyHot, or Biofreeze.",
                     "He knows that, since his last visit, he is better."):
        assert split_enumeration(sentence) == [sentence], sentence


def test_key_value_lines_keep_their_key():
    line = ("Vital signs: BP 120/80, HR 72 General: Alert and oriented, no acute distress "
            "Cardiovascular: Regular rate and rhythm, no murmurs, rubs, or gallops")
    assert split_keyed(line) == ["Vital signs: BP 120/80, HR 72", "General: Alert and oriented, no acute distress",
                                 "Cardiovascular: Regular rate and rhythm, no murmurs, rubs, or gallops"]
    assert clinician_claims(line) == [
        "Vital signs: BP 120/80.", "Vital signs: HR 72.", "General: Alert and oriented.",
        "General: no acute distress.", "Cardiovascular: Regular rate and rhythm.", "Cardiovascular: no murmurs.",
        "Cardiovascular: no rubs.", "Cardiovascular: no gallops."]
    assert clinician_claims("Autoimmune panel: Negative for ANA, RF, and HLA-B27") == [
        "Autoimmune panel: Negative for ANA.", "Autoimmune panel: Negative for RF.",
        "Autoimmune panel: Negative for HLA-B27."]


def test_a_body_system_key_ends_the_value_before_it():
    """GPT-4's exam line "… no M/R/G Respiratory: CTA bilaterally Musculoskeletal: …": the split
    reads "M/R/G Respiratory" and "CTA bilaterally Musculoskeletal" as keys; the keys are the body
    systems, and a key cut inside ("Patient Agreements", "Right Lower Extremities") stays whole."""
    line = "Cardiovascular: RRR, no M/R/G Respiratory: CTA bilaterally Musculoskeletal: Midline tenderness"
    assert split_keyed(line) == ["Cardiovascular: RRR, no M/R/G", "Respiratory: CTA bilaterally",
                                 "Musculoskeletal: Midline tenderness"]
    assert split_keyed("CV: RRR Respiratory: clear") == ["CV: RRR", "Respiratory: clear"]
    assert split_keyed("Right Lower Extremities: No edema.") == ["Right Lower Extremities: No edema."]
    assert split_keyed("Plan: rest. Patient Agreements: The patient understands.") == [
        "Plan: rest.", "Patient Agreements: The patient understands."]


def test_headers_preambles_and_bare_subheaders_are_no_claims():
    note = ("Possible clinical note: HISTORY OF PRESENT ILLNESS: He is here today for a follow-up.\n"
            "Cardiovascular\nNeck:\nPatient Agreements:\nDepression.\n"
            "Patient Agreements: The patient understands and agrees with the plan.")
    assert ClauseExtractor().extract(note) == [
        "He is here today for a follow-up.", "Depression.",
        "Patient Agreements: The patient understands and agrees with the plan."]
    assert is_bare_subheader("Vital signs") and is_bare_subheader("MSK:") and not is_bare_subheader("Hypertension.")
    assert ClauseExtractor().signature() == "clauses:v4"


def test_overlap_explains_which_words_the_note_lacks():
    from doclens.evaluators.base import ClaimRequest
    from doclens.evaluators.rules.overlap import OverlapEvaluator

    judge = OverlapEvaluator()
    [[kept, missed, negated]] = judge.judge_claims_many([ClaimRequest(
        "The patient has knee pain and swelling.", ["knee pain", "knee pain with fever and rash", "no knee pain"])])
    assert kept.entailed and kept.explanation.startswith("100%")
    assert not missed.entailed and "note lacks: fever, rash" in missed.explanation
    assert not negated.entailed and "negated" in negated.explanation
    assert judge.entail_batch([("knee pain", "knee pain"), ("knee pain", "fever")]) == [True, False]
