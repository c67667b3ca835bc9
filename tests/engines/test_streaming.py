"""Streamed scoring (doclens.engines.sink): results written as each chunk finishes, the report
reduced incrementally, ``--resume`` after a kill, and every reader accepting the streamed layouts.

The in-memory path (``DocLens.score``, results kept) and the streamed path (``DocLens.score_to``,
results written) must give the same scores, counts, sections, intervals and signature on the
same input; the reference for the aggregation is :func:`doclens.core.metrics.aggregate` over the
whole list of results, the function the report was built with before streaming existed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from doclens import DocLens, Report
from doclens.cli import main
from doclens.core.errors import EXIT_OK, EXIT_USAGE, ConfigurationError, InputError, MissingExtraError
from doclens.core.metrics import aggregate
from doclens.core.types import NO_VERDICT
from doclens.engines.sink import FileSink
from doclens.evaluators.rules.overlap import OverlapEvaluator
from doclens.extraction.extractors import SentenceExtractor
from doclens.families import DOCLENS_METRICS, result_counts
from doclens.reports.results_files import JournalState, instances_path, journal_path, read_journal, result_line, write_result
from doclens.reports.scores_files import scan_report
from doclens.scoring.verdicts import EMPTY_PREMISE, INVALID_IDS, NO_CITATION
from doclens.stats.bootstrap import bootstrap_intervals, report_instance_counts
from tests.conftest import REPO
from tests.helpers import ProvenanceJudge

FORMATS = ("json", "jsonl", "parquet")
#: report fields that must not depend on the path the results took
SAME = ("scores", "counts", "sections", "signature", "unparsed", "failed", "warnings", "config", "usage", "partial")


def mixed_rows(data) -> list[dict]:
    """Notes (sections, sources, citations: valid, invalid, absent), question summaries and
    general texts without a source: every branch of the aggregation."""
    rows = []
    for k, line in enumerate(open(data / "aci_bench_test1.jsonl", encoding="utf-8").readlines()[:10]):
        record = json.loads(line)
        sentences = [s for s in record["reference"].split("\n") if s.strip()]
        prediction = "\n".join(s + (f" [{(k * 7 + i) % 45}]" if i % 3 else "") + (" [1][2][3][4]" if i % 5 == 4 else "")
                               for i, s in enumerate(sentences[::2]))
        rows.append({"id": f"aci-{record['id']}", "prediction": prediction, "reference": record["reference"],
                     "source": record["source"], "task": "note_generation"})
    for line in open(data / "meqsum_test.jsonl", encoding="utf-8").readlines()[:8]:
        record = json.loads(line)
        words = record["reference"].split()
        rows.append({"id": f"meq-{record['id']}", "prediction": " ".join(words[: max(1, len(words) // 2)]) + " [0]",
                     "reference": record["reference"], "source": record["source"], "task": "question_summarization"})
    for k in range(7):
        rows.append({"id": f"gen-{k}", "prediction": f"Fever for {k} days. No cough." if k % 3 else "",
                     "reference": "Fever for three days. No cough. Rash on the arm."})
    return rows


def judged_rows() -> list[dict]:
    """Given claims, some of which the judge cannot answer (unparsed), with and without sources."""
    return [{"id": f"j{k}", "prediction": f"The patient has fever {k} [0]. He coughs [1]. Rash [5].",
             "reference": "Fever, cough.", "reference_claims": ["The patient has fever.", "GARBLED claim"][: 1 + k % 2],
             "prediction_claims": [f"The patient has fever {k}."],
             **({"source": ["[patient] fever", "[patient] cough"]} if k % 4 else {})} for k in range(23)]


def overlap_scorer(**options) -> DocLens:
    return DocLens(OverlapEvaluator(), SentenceExtractor(), max_citations=3, **options)


def _same_report(a: Report, b: Report) -> None:
    for key in SAME:
        assert getattr(a, key) == getattr(b, key), key


@pytest.mark.parametrize("fmt", FORMATS)
def test_streamed_scores_equal_the_in_memory_path(tmp_path, shared_data, fmt):
    rows = mixed_rows(shared_data)
    memory = overlap_scorer(chunk_size=4).score(rows, progress=False)
    output = tmp_path / "s.json"
    streamed = overlap_scorer(chunk_size=4).score_to(str(output), rows, output_format=fmt, progress=False)
    assert streamed.instances == [] and streamed.size == len(rows) and streamed.written == str(output)
    loaded = Report.load(output)
    _same_report(memory, streamed)
    _same_report(memory, loaded)
    assert [r.to_dict() for r in loaded.instances] == [r.to_dict() for r in memory.instances]
    assert memory.sections and memory.counts["citations"]["invalid_ids"] and memory.counts["citations"][
        "capped_statements"] and memory.counts["citation_recall"]["skipped"]  # the branches are exercised
    # the whole-list aggregation the report was built with before streaming
    assert aggregate([result_counts(r, "zero") for r in memory.instances], DOCLENS_METRICS) == (
        memory.scores, {m: {k: v for k, v in c.items() if k not in ("unparsed", "failed", "not_applicable", "section_fallbacks",
                                                                        "stated_in_other_section",
                                                                        "stated_in_other_section_by_section")}
                        for m, c in memory.counts.items() if m != "citations"})
    # intervals: from the in-memory report, from the streamed report's own counts, from the file
    ids, counts = report_instance_counts(memory)
    streamed_ids, streamed_counts = report_instance_counts(streamed)
    header, file_ids, file_counts = scan_report(str(output))
    assert ids == streamed_ids == file_ids and counts == streamed_counts == file_counts
    intervals = bootstrap_intervals(counts, 200, seed=3)
    assert intervals == bootstrap_intervals(streamed_counts, 200, seed=3) == bootstrap_intervals(file_counts, 200, 3)
    assert not os.path.exists(journal_path(str(output)))  # a complete run leaves no journal
    assert os.path.exists(instances_path(str(output), fmt)) == (fmt != "json")


def test_unparsed_items_count_the_same_streamed(tmp_path):
    rows = judged_rows()
    for on_unparsed in ("zero", "exclude"):
        memory = DocLens(ProvenanceJudge(), on_unparsed=on_unparsed, chunk_size=5).score(rows, progress=False)
        output = tmp_path / f"{on_unparsed}.json"
        streamed = DocLens(ProvenanceJudge(), on_unparsed=on_unparsed, chunk_size=5).score_to(
            str(output), rows, output_format="jsonl", progress=False)
        assert memory.unparsed["reference_claims"] == 11 and memory.warnings
        _same_report(memory, streamed)
        _same_report(memory, Report.load(output))
        assert streamed.judged == sum(
            1 for r in memory.instances for v in r.reference_claims + r.prediction_claims + r.statements
            if v.status in NO_VERDICT or not (v.explanation in (EMPTY_PREMISE, NO_CITATION)
                                              or v.explanation.startswith(INVALID_IDS)))


def test_chunk_size_does_not_change_the_scores(tmp_path, shared_data):
    rows = mixed_rows(shared_data)
    reports = [overlap_scorer(chunk_size=size).score_to(str(tmp_path / f"{size}.json"), rows, progress=False)
               for size in (1, 7, 1000)]
    for report in reports[1:]:
        for key in ("scores", "counts", "sections", "signature"):
            assert getattr(report, key) == getattr(reports[0], key)


def test_the_one_file_layout_is_what_report_save_writes(tmp_path):
    rows = judged_rows()
    DocLens(ProvenanceJudge()).score(rows, progress=False).save(tmp_path / "saved.json")
    DocLens(ProvenanceJudge()).score_to(str(tmp_path / "streamed.json"), rows, progress=False)
    saved = json.loads((tmp_path / "saved.json").read_text())
    streamed = json.loads((tmp_path / "streamed.json").read_text())
    assert list(saved) == list(streamed) and saved == streamed


def test_a_large_result_is_written_piece_by_piece_to_the_same_line(tmp_path):
    row = {"id": "big", "reference": "Fever.", "source": ["fever", "cough \ud800"],
           "prediction": "\n".join(f"Fever {k} [{k % 3}]." for k in range(3000))}
    result = DocLens(OverlapEvaluator(), SentenceExtractor()).score([row], progress=False).instances[0]
    assert len(result.statements) == 3000
    with open(tmp_path / "line.jsonl", "w", encoding="utf-8") as handle:
        write_result(handle, result)
    assert (tmp_path / "line.jsonl").read_text(encoding="utf-8") == result_line(result.to_dict())


# ---- the journal and --resume ------------------------------------------------------------------
def _commits(path) -> int:
    try:
        return sum(1 for line in open(path, "rb") if line.startswith(b'{"commit":'))
    except FileNotFoundError:
        return 0


class SlowOverlap(OverlapEvaluator):
    """The overlap judge, slow enough per batch to be killed mid-run."""

    def entail_batch(self, pairs):
        time.sleep(0.03)
        return super().entail_batch(pairs)


class RecordingOverlap(OverlapEvaluator):
    asked: list = []

    def entail_batch(self, pairs):
        RecordingOverlap.asked.extend(h for _, h in pairs)
        return super().entail_batch(pairs)


def numbered_rows(n: int) -> list[dict]:
    return [{"id": f"r{k}", "prediction": f"Fever number{k} began [0]. Cough number{k} [1]. Rash [2].",
             "reference": f"Fever number{k} began. Cough. Headache.",
             "source": ["[patient] fever number began", "[patient] cough", "[doctor] rash"]} for k in range(n)]


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err, captured.err
    return code, captured.out, captured.err


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ("jsonl", "json"))
def test_a_killed_run_resumes_to_the_uninterrupted_result(tmp_path, capsys, fmt):
    rows = _write_jsonl(tmp_path / "in.jsonl", numbered_rows(120))
    options = ["--evaluator", "tests.engines.test_streaming:SlowOverlap", "--extractor", "sentences", "--chunk-size", "4",
               "-q", "--output-format", fmt]
    whole = tmp_path / "whole.json"
    assert _run(["score", rows, *options, "-o", whole], capsys)[0] == EXIT_OK
    output = tmp_path / "s.json"
    journal = journal_path(str(output))
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    process = subprocess.Popen([sys.executable, "-m", "doclens.cli", "score", str(rows), *options, "-o", str(output)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO)
    deadline = time.monotonic() + 120
    while _commits(journal) < 3 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)  # no handler runs: only the journal is left
    process.communicate(timeout=60)
    committed = _commits(journal)
    assert 3 <= committed < 30 and not output.exists(), "the run was not killed mid-run"
    with open(journal, "a", encoding="utf-8") as handle:  # killed mid-write: a cut-off last line
        handle.write('{"id":"r999","task":"gen')
    code, out, err = _run(["score", rows, *options, "-o", output, "--resume"], capsys)
    assert code == EXIT_OK, err
    assert not os.path.exists(journal)
    resumed, reference = Report.load(output), Report.load(whole)
    _same_report(reference, resumed)
    assert [r.to_dict() for r in resumed.instances] == [r.to_dict() for r in reference.instances]


def test_resume_scores_only_what_the_journal_lacks(tmp_path):
    rows = numbered_rows(40)
    output = str(tmp_path / "s.json")

    def stop_after(n):
        for k, row in enumerate(rows):
            if k == n:
                raise KeyboardInterrupt
            yield row

    with pytest.raises(KeyboardInterrupt) as stopped:
        DocLens(RecordingOverlap(), SentenceExtractor(), chunk_size=5).score_to(output, stop_after(17), progress=False)
    partial = stopped.value.partial_report
    assert partial.partial and partial.size == 15 and Report.load(output).partial  # 3 finished chunks
    state = JournalState({})
    assert sum(len(lines) for lines, _ in read_journal(journal_path(output), state)) == 15
    RecordingOverlap.asked = []
    resumed = DocLens(RecordingOverlap(), SentenceExtractor(), chunk_size=5).score_to(output, rows, resume=True,
                                                                                      progress=False)
    asked = " ".join(RecordingOverlap.asked)
    assert "number3 " not in asked and "number14 " not in asked and "number15 " in asked and "number39 " in asked
    whole = DocLens(OverlapEvaluator(), SentenceExtractor(), chunk_size=5).score(rows, progress=False)
    for key in ("scores", "counts", "sections", "unparsed", "failed"):
        assert getattr(resumed, key) == getattr(whole, key), key
    assert resumed.signature == whole.signature
    assert [r.to_dict() for r in Report.load(output).instances] == [r.to_dict() for r in whole.instances]


def test_resume_with_other_settings_is_refused(tmp_path, capsys):
    rows = _write_jsonl(tmp_path / "in.jsonl", numbered_rows(12))
    output = tmp_path / "s.json"
    bad = _write_jsonl(tmp_path / "bad.jsonl", numbered_rows(8) + [{"id": "x", "reference": "no prediction"}])
    code, _, err = _run(["score", bad, "--evaluator", "overlap", "--extractor", "sentences", "--chunk-size", "2",
                         "-q", "-o", output], capsys)
    assert code == EXIT_USAGE and "--resume" in err and os.path.exists(journal_path(str(output)))
    before = open(journal_path(str(output)), "rb").read()
    code, _, err = _run(["score", rows, "--evaluator", "overlap", "--extractor", "sentences", "--uncited", "inherit",
                         "-q", "-o", output, "--resume"], capsys)
    assert code == EXIT_USAGE
    assert "other settings" in err and "uncited: zero != inherit" in err
    assert open(journal_path(str(output)), "rb").read() == before  # refused before anything was written
    code, out, err = _run(["score", rows, "--evaluator", "overlap", "--extractor", "sentences", "-q", "-o", output,
                           "--resume"], capsys)
    assert code == EXIT_OK, err
    assert Report.load(output).size == 12 and not Report.load(output).partial


def test_the_journal_drops_an_uncommitted_chunk_and_a_cut_off_line(tmp_path):
    output = str(tmp_path / "s.json")
    with pytest.raises(KeyboardInterrupt):
        DocLens(OverlapEvaluator(), SentenceExtractor(), chunk_size=3).score_to(
            output, (row if k < 7 else (_ for _ in ()).throw(KeyboardInterrupt)
                     for k, row in enumerate(numbered_rows(9))), progress=False)
    journal = journal_path(output)
    lines = open(journal, encoding="utf-8").readlines()
    with open(journal, "a", encoding="utf-8") as handle:  # a chunk written without its commit, then a cut line
        handle.write(lines[1] + lines[2] + lines[3][:20])
    state = JournalState({})
    chunks = list(read_journal(journal, state))
    assert [len(lines) for lines, _ in chunks] == [3, 3] and state.dropped_lines == 3
    assert state.committed_bytes == len("".join(lines).encode("utf-8"))
    with open(journal, "a", encoding="utf-8") as handle:
        handle.write('\n{"commit": {"instances": 7}}\n')
    with pytest.raises(InputError, match="line 13: the commit line counts 7"):
        list(read_journal(journal))


def test_a_partial_streamed_run_never_replaces_a_complete_output(tmp_path, capsys):
    rows = _write_jsonl(tmp_path / "in.jsonl", numbered_rows(6))
    output = tmp_path / "s.json"
    options = ["--evaluator", "overlap", "--extractor", "sentences", "-q", "--output-format", "jsonl"]
    assert _run(["score", rows, *options, "-o", output], capsys)[0] == EXIT_OK
    complete = output.read_bytes(), (tmp_path / "s.instances.jsonl").read_bytes()
    bad = _write_jsonl(tmp_path / "bad.jsonl", numbered_rows(3) + [{"id": "x", "reference": "no prediction"}])
    code, _, err = _run(["score", bad, *options, "--chunk-size", "1", "-o", output], capsys)
    assert code == EXIT_USAGE
    assert (output.read_bytes(), (tmp_path / "s.instances.jsonl").read_bytes()) == complete
    partial = Report.load(tmp_path / "s.partial.json")
    assert partial.partial and partial.size == 3 and (tmp_path / "s.partial.instances.jsonl").exists()


# ---- readers ---------------------------------------------------------------------------------
@pytest.fixture
def streamed_outputs(tmp_path, capsys):
    rows = _write_jsonl(tmp_path / "in.jsonl", numbered_rows(30))
    paths = {}
    for fmt in FORMATS:
        paths[fmt] = tmp_path / f"{fmt}.json"
        code, _, err = _run(["score", rows, "--evaluator", "overlap", "--extractor", "sentences", "-q", "--chunk-size",
                             "7", "--output-format", fmt, "-o", paths[fmt], "--system", f"sys-{fmt}"], capsys)
        assert code == EXIT_OK, err
    return rows, paths


def test_report_reads_every_layout(tmp_path, capsys, streamed_outputs):
    rows, paths = streamed_outputs
    pages = {}
    for fmt, path in paths.items():
        code, out, err = _run(["report", path, "--input", rows, "-o", tmp_path / f"{fmt}.html", "--resamples", "50"],
                              capsys)
        assert code == EXIT_OK and "report of 30 instances" in out, err
        pages[fmt] = (tmp_path / f"{fmt}.html").read_text(encoding="utf-8")
    assert "number29" in pages["parquet"] and "number29" in pages["jsonl"]
    assert len({len(page) for page in pages.values()}) == 1  # the same page whatever the layout


def test_leaderboard_and_compare_read_every_layout(capsys, streamed_outputs):
    _, paths = streamed_outputs
    code, out, err = _run(["leaderboard", *paths.values(), "--resamples", "50"], capsys)
    assert code == EXIT_OK, err
    assert "table 1 of 1" in out and all(f"sys-{fmt}" in out for fmt in FORMATS)
    code, out, err = _run(["compare", paths["json"], paths["parquet"], "--json", "--resamples", "50"], capsys)
    assert code == EXIT_OK, err
    result = json.loads(out)
    assert result["instances"] == 30 and all(d["delta"] == 0 for d in result["differences"].values()
                                             if d["delta"] is not None)


def test_validate_reads_every_layout_and_refuses_tampering(tmp_path, capsys, streamed_outputs):
    _, paths = streamed_outputs
    for path in paths.values():
        code, out, _ = _run(["validate", path], capsys)
        assert code == EXIT_OK and "valid scores" in out
    summary = json.loads(paths["jsonl"].read_text())
    # counts edited in the summary no longer match the results beside it
    summary["instance_counts"]["claim_recall"]["hits"][4] += 1
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(summary))
    (tmp_path / "tampered.instances.jsonl").write_bytes((tmp_path / "jsonl.instances.jsonl").read_bytes())
    summary["instances_file"] = "tampered.instances.jsonl"
    tampered.write_text(json.dumps(summary))
    code, out, _ = _run(["validate", tampered], capsys)
    assert code == EXIT_USAGE and "instance_counts" in out and "'r4'" in out
    code, _, err = _run(["leaderboard", tampered], capsys)
    assert code == EXIT_USAGE and "instance_counts" in err
    # a results file outside the summary's folder, a missing one, a results file cut off
    for name, message in (("../jsonl.instances.jsonl", "plain file name"), ("gone.jsonl", "cannot read")):
        tampered.write_text(json.dumps(dict(summary, instances_file=name)))
        code, out, err = _run(["validate", tampered], capsys)
        assert code == EXIT_USAGE and message in out + err
    cut = (tmp_path / "jsonl.instances.jsonl").read_bytes()
    (tmp_path / "tampered.instances.jsonl").write_bytes(cut[:-30])
    tampered.write_text(json.dumps(summary))
    code, out, err = _run(["validate", tampered], capsys)
    assert code == EXIT_USAGE and "cut off" in out + err


def test_parquet_without_pyarrow_names_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'doclens\[parquet\]'"):
        FileSink(str(tmp_path / "s.json"), "parquet")
    rows = _write_jsonl(tmp_path / "in.jsonl", numbered_rows(3))
    code, _, err = _run(["score", rows, "--evaluator", "overlap", "--extractor", "sentences", "-q",
                         "--output-format", "parquet", "-o", tmp_path / "s.json"], capsys)
    assert code == EXIT_USAGE and "doclens[parquet]" in err and not (tmp_path / "s.json").exists()


def test_an_unknown_format_is_refused():
    with pytest.raises(ConfigurationError, match="output format"):
        FileSink("x.json", "csv")


def test_a_streamed_report_is_not_saved_without_its_instances(tmp_path):
    report = DocLens(OverlapEvaluator(), SentenceExtractor()).score_to(str(tmp_path / "s.json"), numbered_rows(3),
                                                                       progress=False)
    with pytest.raises(ValueError, match="Report.load"):
        report.save(tmp_path / "copy.json")
    Report.load(tmp_path / "s.json").save(tmp_path / "copy.json")
    assert Report.load(tmp_path / "copy.json").size == 3


def test_chunks_scored_elsewhere_and_fed_to_a_sink_give_the_same_report(tmp_path):
    """The interface another engine uses: score_chunk on a worker, add_chunk on the driver."""
    from doclens.core.types import Instance
    from doclens.scoring.run import Run

    rows = judged_rows()
    reference = DocLens(ProvenanceJudge(), chunk_size=4).score(rows, progress=False)
    worker, driver = DocLens(ProvenanceJudge()), DocLens(ProvenanceJudge())
    sink, run = FileSink(str(tmp_path / "s.json"), "jsonl"), Run()
    sink.start(driver, run)
    instances = [Instance.from_dict(row) for row in rows]
    for start in range(0, len(instances), 4):
        results, meta = worker.score_chunk(instances[start: start + 4])
        run.merge(meta)
        sink.add_chunk(results, meta)
    report = sink.finish(driver, run)
    for key in ("scores", "counts", "sections", "signature", "unparsed"):
        assert getattr(report, key) == getattr(reference, key), key
    assert [r.to_dict() for r in Report.load(tmp_path / "s.json").instances] == [
        r.to_dict() for r in reference.instances]


def test_resume_without_a_journal_scores_everything_and_says_so(tmp_path, capsys):
    rows = _write_jsonl(tmp_path / "in.jsonl", numbered_rows(5))
    code, _, err = _run(["score", rows, "--evaluator", "overlap", "--extractor", "sentences", "-q", "-o",
                         tmp_path / "s.json", "--resume"], capsys)
    assert code == EXIT_OK and "no journal" in err and "resuming from" not in err
    assert Report.load(tmp_path / "s.json").size == 5
    code, _, err = _run(["score", rows, "--evaluator", "overlap", "-q", "-o", "-", "--resume"], capsys)
    assert code == EXIT_USAGE and "--resume" in err


def test_a_damaged_parquet_results_file_is_refused(tmp_path, capsys, streamed_outputs):
    _, paths = streamed_outputs
    results = tmp_path / "parquet.instances.parquet"
    results.write_bytes(results.read_bytes()[: results.stat().st_size // 2])
    code, out, err = _run(["validate", paths["parquet"]], capsys)
    assert code == EXIT_USAGE and "parquet.instances.parquet" in out + err
    code, _, err = _run(["leaderboard", paths["parquet"]], capsys)
    assert code == EXIT_USAGE and "Parquet" in err


def test_the_reference_claims_a_scorer_keeps_are_bounded_and_a_kept_reference_is_not_extracted_again(monkeypatch):
    """The scorer keeps extracted reference claims so that a reference scored again (the next
    system's outputs) is not extracted again; it kept up to 20,000 references whatever their size,
    so a stream of distinct references grew its memory with the input (benchmarks/scale.py: 1.30x
    from 2,000 to 20,000 instances). Now it keeps them up to a budget of characters, first come."""
    from doclens.scoring import scorer as scorer_module

    monkeypatch.setattr(scorer_module, "REFERENCE_CLAIMS_KEPT_CHARS", 2_000, raising=False)
    extracted: list[str] = []
    original = SentenceExtractor.extract

    def counted(self, text, task="general", section=None):
        extracted.append(text)
        return original(self, text, task, section)

    monkeypatch.setattr(SentenceExtractor, "extract", counted)
    rows = [{"id": f"i{i}", "prediction": f"Fever for {i} days.",
             "reference": f"Patient {i} reports fever for {i} days. Knee pain on the left side since week {i}."}
            for i in range(60)]
    scorer = DocLens(OverlapEvaluator(), SentenceExtractor(), task="general")
    scorer.score(rows, progress=False)
    kept = scorer._reference_claims
    held = sum(len(text) + sum(map(len, claims)) for (_, _, text), claims in kept.items())
    assert 0 < len(kept) < len(rows) and held <= 2_000
    extracted.clear()
    scorer.score(rows[:3], progress=False)  # kept: not extracted again
    assert not any(row["reference"] in extracted for row in rows[:3])
    scorer.score(rows[-1:], progress=False)  # not kept (over the budget): extracted again, still right
    assert rows[-1]["reference"] in extracted
