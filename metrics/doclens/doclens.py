# Copyright 2026 The DocLens authors. Apache-2.0.
"""DocLens as a Hugging Face `evaluate` metric: claim recall, claim precision, citation recall
and citation precision of medical text generation (Xie et al., DocLens)."""

import datasets
import evaluate

import doclens
from doclens.evaluators import load_evaluator
from doclens.evaluators import load_extractor

_CITATION = """\
@inproceedings{xie-etal-2024-doclens,
    title = "{D}oc{L}ens: Multi-aspect Fine-grained Evaluation for Medical Text Generation",
    author = "Xie, Yiqing and Zhang, Sheng and Cheng, Hao and Liu, Pengfei and Gero, Zelalem and
      Wong, Cliff and Naumann, Tristan and Poon, Hoifung and Rose, Carolyn",
    booktitle = "Proceedings of the 62nd Annual Meeting of the Association for Computational Linguistics",
    year = "2024",
}
"""

_DESCRIPTION = """\
DocLens breaks a generated medical text and its reference into subclaims and checks each one with
an entailment judge: claim recall (completeness: reference claims entailed by the output), claim
precision (conciseness: output claims entailed by the reference), and, when the output cites
numbered source units ([3]), citation recall and precision (attribution, leave-one-out rule).
Headline numbers are pooled over the corpus; `<metric>_macro` gives the mean of per-instance
scores. Every result carries a signature that pins what can change a score.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): generated texts; may cite source units as [3], [3][4], [3, 4].
    references (list of str): human-written texts.
    sources (list of str, optional): generation inputs with units numbered "[0] … [1] …"
        (ACI turns "[0][doctor] …"); needed for the citation metrics.
    reference_claims, prediction_claims (list of list of str, optional): precomputed subclaims.
    evaluator (doclens.Evaluator, optional): a judge object; overrides the config name.
    evaluator_options (dict, optional): constructor options for the config's preset.
    extractor (doclens.Extractor or str, optional): claim extractor for rows without claims.
    task (str, optional): general, note_generation, report_summarization, question_summarization.
    uncited ("zero", "inherit" or "inherit-across-sections"), max_citations (int or None), on_unparsed ("zero", "exclude", "raise").
    baselines (list of str, optional): also compute rouge / bertscore / medcon.
    return_report (bool): add the full `doclens.Report` (per-claim evidence) under "report".
Returns:
    claim_recall, claim_precision, citation_recall, citation_precision (pooled, in [0, 1] or None
    when there is nothing to score), the same with a `_macro` suffix, `signature`, `counts`.
Examples:
    >>> import evaluate
    >>> from doclens.evaluators.overlap import OverlapEvaluator
    >>> metric = evaluate.load("metrics/doclens")
    >>> results = metric.compute(
    ...     predictions=["Fever for two days [0]. Takes ibuprofen [1]."],
    ...     references=["Two days of fever. No medication."],
    ...     sources=["[0][patient] fever for two days [1][patient] i take ibuprofen"],
    ...     reference_claims=[["Fever for two days.", "No medication."]],
    ...     prediction_claims=[["Fever for two days.", "Takes ibuprofen."]],
    ...     evaluator=OverlapEvaluator())
    >>> results["claim_recall"], results["claim_precision"], results["citation_recall"]
    (0.5, 0.5, 1.0)
"""

#: config_name → evaluator preset; "default" is the offline default judge (rule-based, explained).
DEFAULT_PRESET = "clinical-rules"

_BASE = {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
_SOURCES = {"sources": datasets.Value("string")}
_CLAIMS = {"reference_claims": datasets.Sequence(datasets.Value("string")),
           "prediction_claims": datasets.Sequence(datasets.Value("string"))}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Doclens(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[datasets.Features({**_BASE, **_SOURCES, **_CLAIMS}), datasets.Features({**_BASE, **_CLAIMS}),
                      datasets.Features({**_BASE, **_SOURCES}), datasets.Features(_BASE)],
            homepage="https://github.com/yiqingxyq/DocLens",
            codebase_urls=["https://github.com/yiqingxyq/DocLens"],
            reference_urls=["https://arxiv.org/abs/2311.09581"],
        )

    # evaluate picks among feature variants only when they share their keys; DocLens's inputs are
    # optional (sources, claims), so the variant is chosen from the keys the caller passes.
    def _select_format(self, keys):
        for features in self.features:
            if set(features) == set(keys):
                self._doclens_format = features
                return
        options = "; ".join(", ".join(f) for f in self.features)
        raise ValueError(f"doclens takes one of these input sets: {options} (got {', '.join(sorted(keys))})")

    def _input_keys(self, kwargs):
        return {"predictions", "references"} | {k for k in kwargs if k in ("sources", "reference_claims",
                                                                          "prediction_claims")}

    def _feature_names(self):
        chosen = getattr(self, "_doclens_format", None)
        return list(chosen if chosen is not None else self.features[0])

    def _infer_feature_from_example(self, example):
        chosen = getattr(self, "_doclens_format", None)
        return chosen if chosen is not None else super()._infer_feature_from_example(example)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of predictions, references and (optionally) sources and claims."""
        if self.writer is None:
            self._select_format(self._input_keys(kwargs))
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one prediction, reference and (optionally) source and claims."""
        if self.writer is None:
            self._select_format({"predictions", "references"} | {k for k in kwargs if k in (
                "sources", "reference_claims", "prediction_claims")})
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Compute DocLens; see the module description for the inputs."""
        if (predictions is not None or references is not None) and self.writer is None:
            self._select_format(self._input_keys(kwargs))
        try:
            return super().compute(predictions=predictions, references=references, **kwargs)
        finally:
            self._doclens_format = None

    def _evaluator(self, evaluator_options):
        preset = DEFAULT_PRESET if self.config_name in (None, "", "default") else self.config_name
        cached = getattr(self, "_loaded_evaluator", None)
        if cached is None or cached[0] != (preset, repr(evaluator_options)):
            cached = ((preset, repr(evaluator_options)), load_evaluator(preset, **(evaluator_options or {})))
            self._loaded_evaluator = cached
        return cached[1]

    def _compute(self, predictions, references, sources=None, reference_claims=None, prediction_claims=None,
                 evaluator=None, evaluator_options=None, extractor=None, task=None, uncited="zero",
                 max_citations=None, on_unparsed="zero", baselines=None, baseline_options=None,
                 return_report=False):
        judge = evaluator if evaluator is not None else self._evaluator(evaluator_options)
        if isinstance(extractor, str):
            extractor = load_extractor(extractor)
        elif extractor is None and callable(getattr(judge, "make_extractor", None)) and (
                reference_claims is None or prediction_claims is None):
            extractor = judge.make_extractor()
        rows = []
        for i, (prediction, reference) in enumerate(zip(predictions, references)):
            row = {"id": str(i), "prediction": prediction, "reference": reference}
            if sources is not None:
                row["source"] = sources[i]
            if reference_claims is not None:
                row["reference_claims"] = list(reference_claims[i])
            if prediction_claims is not None:
                row["prediction_claims"] = list(prediction_claims[i])
            rows.append(row)
        scorer = doclens.DocLens(judge, extractor, task=task, uncited=uncited, max_citations=max_citations,
                                 on_unparsed=on_unparsed, baselines=baselines, baseline_options=baseline_options)
        report = scorer.score(rows, progress=False)
        result = dict(report.scores)
        result["signature"] = report.signature
        result["counts"] = report.counts
        if report.sections:
            result["sections"] = report.sections
        if report.baselines:
            result["baselines"] = {name: value["scores"] for name, value in report.baselines.items()}
        if return_report:
            result["report"] = report
        return result
