"""Reports that scale with their inputs (issue 31): the bootstrap resamples a big input a few
resamples at a time (bounded memory, the same intervals), the per-instance counts are kept as
columns, and ``doclens report`` shows at most ``--max-instances`` instances, failures first, with
a note saying so. The scale figures themselves are ``benchmarks/report_scale.py``'s."""

import re
import tracemalloc

import numpy as np

from doclens import DocLens
from doclens.evaluators.rules.overlap import OverlapEvaluator
from doclens.reports.scores_files import CountColumns
from doclens.stats import bootstrap
from tests.inputs.test_hostile_inputs import run


def _counts(size: int) -> CountColumns:
    rng = np.random.default_rng(0)
    columns = CountColumns()
    items = rng.integers(0, 20, size=(size, 2))
    hits = rng.integers(0, 20, size=(size, 2)) % (items + 1)
    for i in range(size):
        columns.append({"claim_recall": (int(hits[i, 0]), int(items[i, 0])),
                        "claim_precision": (int(hits[i, 1]), int(items[i, 1]))})
    return columns


def test_count_columns_read_back_as_the_dicts_given():
    given = [{"claim_recall": (1, 2)}, {"claim_recall": (0, 0), "citation_recall": (3, 4)}, {}]
    columns = CountColumns()
    for counts in given:
        columns.append(counts)
    assert columns == given and list(columns) == given and columns[-2] == given[1] and columns[1:] == given[1:]


def test_a_big_bootstrap_holds_a_few_resamples_at_a_time_and_gives_the_same_intervals(monkeypatch):
    counts = _counts(100_000)
    tracemalloc.start()
    try:
        bounded = bootstrap.bootstrap_intervals(counts, n_resamples=60, seed=7)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # 128 resamples at once would hold 2 × 128 × 100,000 numbers (205 MB); now 2 × 4M (64 MB) + the table
    assert peak < 120 * 2**20, peak / 2**20
    monkeypatch.setattr(bootstrap, "_CELLS", 10**12)  # every resample in one chunk
    assert bootstrap.bootstrap_intervals(counts, n_resamples=60, seed=7) == bounded


def test_report_page_shows_the_instances_with_most_failures_first_and_says_so(tmp_path, capsys):
    rows = [{"id": f"i{k}", "prediction": "Fever." if k % 4 else "Nothing at all.", "reference": "Fever. Cough.",
             "reference_claims": ["Fever.", "Cough."] if k % 4 else ["Fever.", "Cough.", "Rash.", "Pain."],
             "prediction_claims": ["Fever."]} for k in range(12)]
    path = tmp_path / "scores.json"
    DocLens(OverlapEvaluator()).score(rows, progress=False).save(path)
    page = tmp_path / "page.html"
    code, out, _ = run(["report", path, "-o", page, "--resamples", 0, "--max-instances", 3], capsys)
    assert code == 0 and "showing 3, most failures first" in out
    html = page.read_text()
    shown = re.findall(r'<section class="instance" id="inst-(\d+)" data-failures="(\d+)"', html)
    assert [int(p) for p, _ in shown] == [0, 4, 8]  # the four-claim instances miss every claim
    assert "Showing 3 of 12 instances: those with the most failures first" in html
    code, _, _ = run(["report", path, "-o", page, "--resamples", 0, "--max-instances", 0], capsys)
    assert code == 0 and len(re.findall(r'<section class="instance"', page.read_text())) == 12
    assert "Showing" not in page.read_text()
