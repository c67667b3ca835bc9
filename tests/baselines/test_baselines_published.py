"""DocLens's ROUGE equals ACI-BENCH's published tables (test splits 2 and 3, 21 real systems,
the ALL block and each division block) within 0.01 points, with the documented settings: the
defaults (no stemming, ROUGE-Lsum on the notes' own lines) plus ``divisions="aci-bench"`` and
``remove_citations=False``. Needs rouge-score only; reads ``../shared/data/aci_bench_systems``."""

import pytest

pytest.importorskip("rouge_score", reason="rouge-score is not installed (the 'baselines' extra)")

from tests.aci_published import DATA, SPLITS, differences, published_table, read_split, score_system  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def shared_data():
    if not (DATA / "test2" / "published_scores.csv").is_file():
        pytest.skip(f"ACI-BENCH system outputs not found at {DATA} (the shared data folder beside the repo)")


@pytest.mark.parametrize("split", SPLITS)
def test_rouge_equals_the_published_table(split):
    _, references, systems = read_split(split)
    table = published_table(split)
    assert set(table) == {"ALL", "division-subjective", "division-objective_exam", "division-objective_results",
                          "division-assessment_and_plan"}
    assert set(table["ALL"]) == set(systems) and len(systems) == 21  # every system of the table is scored
    ours = {name: score_system(predictions, references) for name, predictions in systems.items()}
    found = differences(split, ours)
    assert len(found) == 5 * 21 * 3
    off = [row for row in found if abs(row["difference"]) > 0.01]
    assert not off, off


def test_the_settings_matter():
    """The check can fail: stemming, DocLens's sentence splitter or DocLens's own division
    procedure each move published values by more than 0.01."""
    _, references, systems = read_split("test2")
    published = published_table("test2")
    predictions = systems["GPT-4"]
    from doclens.baselines import compute_baselines

    for options, divisions in (({"use_stemmer": True}, "aci-bench"), ({"sentence_splitter": "doclens"}, "aci-bench"),
                               ({}, "doclens")):
        result = compute_baselines(predictions, references, ["rouge"], task="note_generation", divisions=divisions,
                                   remove_citations=False,
                                   options={"rouge": {"rouge_types": ["rouge1", "rougeLsum"], **options}})["rouge"]
        moved = [abs(100 * result["scores"]["rouge1_f1"] - published["ALL"]["GPT-4"]["ROUGE-1"]),
                 abs(100 * result["scores"]["rougeLsum_f1"] - published["ALL"]["GPT-4"]["ROUGE-L"])]
        moved += [abs(100 * result["sections"][s]["rougeLsum_f1"] - published[f"division-{s}"]["GPT-4"]["ROUGE-L"])
                  for s in result["sections"]]
        assert max(moved) > 0.01, (options, divisions, moved)
    # DocLens's default strips "[n]" strings from predictions: the LED rows move
    default = score_system(systems["LED"], references)["ALL"]
    stripped = compute_baselines(systems["LED"], references, ["rouge"], options={"rouge": {"rouge_types": ["rouge1"]}})
    assert abs(100 * stripped["rouge"]["scores"]["rouge1_f1"] - default["rouge1_f1"]) > 0.01
