"""Ways of fitting clinical-rules' confidence map, measured (benchmarks/calibration_variants.py, round 14):
the shipped way there is the one benchmarks/fit_calibration.py ships and estimates out of fold, every
variant gives probabilities, and the unread halves are measured only when asked."""

import random

import pytest

from benchmarks import calibration_variants as variants
from doclens.evaluators.rules.calibration import out_of_fold

KINDS = ("assertion/contradiction", "number/unstated", "concept/unstated", "side/contradiction")


def _rows(n: int = 300, seed: int = 0) -> list[dict]:
    """Labelled verdicts as the fit reads them: a third decided by one or two kinds (rarely supported),
    the rest scored (supported more often the higher the score), over five halves and 40 encounters."""
    draw = random.Random(seed)
    rows = []
    for k in range(n):
        half = ("dev", "held-out", "calibration", "fresh", "fresh-2")[k % 5]
        if k % 3 == 0:
            kinds = tuple(sorted(set(draw.sample(KINDS, draw.choice((1, 2))))))
            row = {"score": None, "kinds": kinds, "label": draw.random() < 0.15, "supported": False}
        else:
            score = round(draw.random(), 3)
            row = {"score": score, "kinds": (), "label": draw.random() < score, "supported": score >= 0.3}
        rows.append({**row, "half": half, "group": f"e{k % 40}"})
    return rows


def test_the_shipped_way_reads_out_of_fold_as_the_fit_command_estimates_it():
    rows = [r for r in _rows() if r["half"] == "calibration"]
    ours = variants.out_of_fold(variants.shipped_way, rows)
    theirs = out_of_fold([r["score"] for r in rows], [r["label"] for r in rows], [r["kinds"] for r in rows],
                         [r["group"] for r in rows], scored="logistic")
    assert ours == pytest.approx(theirs)


def test_a_kind_is_shrunk_towards_its_family_and_the_family_towards_all_decided():
    kinds = [("a/unstated",)] * 2 + [("b/unstated",)] * 30 + [("c/contradiction",)] * 30
    labels = [True, True] + [False] * 30 + [n < 15 for n in range(30)]
    shares = variants.family_shares(kinds, labels, shrinkage=10)
    # "a" is seen twice, both supported: drawn most of the way to its family's share, low since "b" never is;
    # drawn towards all decided claims' share instead, it would lie above that
    assert shares["unstated"] < shares["a/unstated"] < shares[""] < shares["contradiction"] < shares["c/contradiction"]


def test_every_variant_gives_probabilities_and_reads_no_unread_half_unless_asked():
    rows = _rows()
    for name in variants.VARIANTS:
        found = variants.measure(name, rows, unread=False)
        assert all(0 <= f["ece"] <= 1 and 0 < f["acc@0.8"] <= 1 for _, _, f in found), name
        assert {half for _, half, _ in found} <= {"dev", "held-out", "calibration", "all"}, name
    asked = {half for _, half, _ in variants.measure("shipped", rows, unread=True)}
    assert {"fresh", "fresh + fresh-2"} <= asked and "sealed" not in asked
