# Copyright 2026 The DocLens authors. Apache-2.0.
"""DocLens as a Hugging Face `evaluate` metric: claim recall, claim precision, citation recall
and citation precision of medical text generation (Xie et al., DocLens)."""

import inspect
from collections.abc import Sequence
from typing import Any

import datasets
import evaluate

import doclens
from doclens.core.tasks import AUTO_TASK, SECTION_NAMES
from doclens.evaluators import EVALUATOR_PRESETS, load_evaluator, load_extractor
from doclens.families import derived_scores, reported

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
    reference_claims, prediction_claims (optional): precomputed subclaims per instance: a list of
        str, or for note_generation a mapping section -> list of str (judged per section); None:
        extracted.
    tasks (list of str, optional): each instance's task (overrides `task`).
    The four optional inputs above are compute() keywords, or add/add_batch columns once declared
    at load: evaluate.load("doclens", config, inputs=["sources", ...]).
    Options (compute() keywords, or evaluate.load keywords as defaults; inside evaluate.combine only
    the latter work):
    evaluator (doclens.Evaluator, optional): a judge object; overrides the config name.
    evaluator_options (dict, optional): constructor options for the config's preset.
    extractor (doclens.Extractor or preset name, optional): claim extractor for rows without claims.
    settings (doclens.ScoringSettings, optional): every scoring setting at once, checked when made.
    The scoring settings one by one (doclens.ScoringSettings checks them and holds the defaults):
    task (str, optional): general, note_generation, report_summarization, question_summarization
        or auto (the default, as `doclens score`: a reference with SOAP section headers is scored per
        note section as note_generation, any other as general).
    uncited ("zero", "inherit" or "inherit-across-sections"), max_citations (int or None),
    on_unparsed ("zero", "exclude", "raise"), question_statements ("whole", "sentences"),
    uncited_outputs ("not-applicable" or "strict": citation scores of outputs that cite nothing).
    premise_scope ("note": a note claim is judged against the whole premise note, counted under its
        own section; "section": against its own section only, the paper's rule), section_fallback
        ("note" or "section": with premise_scope="section", a claim whose section the note lacks),
        source_units ("given", "lines", "turns", "sentences", "auto"), metrics ("doclens" or
        "doclens,source_support"), chunk_size (int).
    baselines (list of str, optional): also compute rouge / bertscore / medcon; baseline_options.
    return_report (bool, compute() only): add the full report as a JSON-ready dict under "report".
    return_instance_scores (bool, compute() only): add "instance_scores", one dict per instance in
        input order: its id ("0", "1", … by position) and its scores (None where nothing to score).
Returns:
    claim_recall, claim_precision, claim_f1, citation_recall, citation_precision (pooled, in [0, 1]
    or None when there is nothing to score), the same with a `_macro` suffix, `signature`, `counts`.
Examples:
    >>> import evaluate
    >>> from doclens.evaluators.rules.overlap import OverlapEvaluator
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
#: every valid config name, checked when `evaluate.load` builds the module
CONFIG_NAMES = ("default", *EVALUATOR_PRESETS)

#: per-instance inputs besides predictions/references: stored columns when declared at load
#: (`inputs=`), else compute() keywords
OPTIONAL_INPUTS = ("sources", "reference_claims", "prediction_claims", "tasks")
#: options, given at load (init keywords, the only way inside `evaluate.combine`) or to compute(): the
#: judge, the extractor, the baselines, and every scoring setting (doclens.ScoringSettings, which
#: checks them and holds their defaults)
OPTIONS = ("evaluator", "evaluator_options", "extractor", "baselines", "baseline_options", "settings",
           *doclens.ScoringSettings.names())

_STRINGS = datasets.Sequence(datasets.Value("string"))
# One stored shape for both claim forms (evaluate picks one Features per module, so a column can't
# be "a list or a mapping"): see _store_claims.
_CLAIMS = {"claims": _STRINGS, **{section: _STRINGS for section in SECTION_NAMES}}
_COLUMNS = {"predictions": datasets.Value("string"), "references": datasets.Value("string"),
            "sources": datasets.Value("string"), "reference_claims": _CLAIMS, "prediction_claims": _CLAIMS,
            "tasks": datasets.Value("string")}


#: a claims cell as stored (:func:`_store_claims`): every key of ``_CLAIMS``, a list or null each
StoredClaims = dict[str, list[str] | None]
#: claims as the caller gives them: a list, or for note_generation a section mapping
Claims = list[str] | dict[str, list[str]]


def _claim_list(value: object, row: int, name: str) -> list[str]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(claim, str) for claim in value):
        raise ValueError(f"doclens: row #{row}, field '{name}' must be a list of strings (or, for note_generation, a "
                         f"mapping from section ({', '.join(SECTION_NAMES)}) to a list of strings)")
    return list(value)


def _store_claims(value: object, row: int, name: str) -> StoredClaims:
    """A claims cell as stored (every key present, as evaluate's string check wants): a list goes
    under "claims"; a section mapping under the section names, a missing section as an empty list
    (the scorer reads it so); no claims (None) leaves every key null. Checked here, row by row:
    evaluate checks the types of a batch's first row only."""
    if value is None:
        return dict.fromkeys(_CLAIMS)
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(SECTION_NAMES), key=str)
        if unknown:
            raise ValueError(f"doclens: row #{row}, field '{name}' has unknown section(s) {unknown}; sections are "
                             f"{', '.join(SECTION_NAMES)}")
        return {"claims": None, **{section: _claim_list(value.get(section, []), row, f"{name}[{section!r}]")
                                   for section in SECTION_NAMES}}
    return {**dict.fromkeys(_CLAIMS), "claims": _claim_list(value, row, name)}


def _read_claims(stored: StoredClaims | None) -> Claims | None:
    """The claims a stored cell holds, in the caller's form (list, or section mapping, or None)."""
    if stored is None or all(value is None for value in stored.values()):
        return None
    if stored["claims"] is not None:
        return list(stored["claims"])
    return {section: list(stored[section] or ()) for section in SECTION_NAMES}  # each a list: _store_claims


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Doclens(evaluate.Metric):
    def __init__(self, *args: Any, inputs: str | Sequence[str] = (), **kwargs: Any) -> None:
        unknown = [name for name in ([inputs] if isinstance(inputs, str) else inputs) if name not in OPTIONAL_INPUTS]
        if isinstance(inputs, str) or unknown:
            raise ValueError(f"doclens: inputs= takes a list of column names among {', '.join(OPTIONAL_INPUTS)}"
                             f" (got {inputs!r})")
        self.input_columns = tuple(name for name in OPTIONAL_INPUTS if name in inputs)
        self.scoring_options = {name: kwargs.pop(name) for name in OPTIONS if name in kwargs}
        # evaluate drops keywords its constructor does not know: a misspelt option would be ignored
        known = inspect.signature(evaluate.EvaluationModule.__init__).parameters
        unknown = sorted(name for name in kwargs if name not in known)
        if unknown:
            raise ValueError(f"doclens: unknown evaluate.load() keyword(s) {unknown}; doclens takes inputs= and "
                             f"the options {', '.join(OPTIONS)}")
        self._rows_added = 0
        super().__init__(*args, **kwargs)

    def _info(self) -> evaluate.MetricInfo:
        if self.config_name not in CONFIG_NAMES:
            raise ValueError(f"doclens has no config {self.config_name!r}; valid config names (evaluator presets): "
                             f"{', '.join(CONFIG_NAMES)}")
        columns = ("predictions", "references", *self.input_columns)
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({name: _COLUMNS[name] for name in columns}),
            homepage="https://github.com/yiqingxyq/DocLens",
            codebase_urls=["https://github.com/yiqingxyq/DocLens"],
            reference_urls=["https://arxiv.org/abs/2311.09581"],
        )

    def _stored(self, columns: dict[str, Any], first_row: int) -> dict[str, Any]:
        """Check that every per-instance column was declared at load; claims in their stored shape."""
        undeclared = [name for name in columns if name in OPTIONAL_INPUTS and name not in self.input_columns]
        if undeclared:
            declared = ", ".join(repr(name) for name in (*self.input_columns, *undeclared))
            raise ValueError(f"doclens: column(s) {undeclared} were not declared when the module was loaded; "
                             f"declare them with evaluate.load('doclens', ..., inputs=[{declared}]) to add them "
                             "batch by batch, or pass them to compute() as keywords")
        stored = dict(columns)
        for name in ("sources", "tasks"):
            for i, value in enumerate(stored.get(name) or ()):
                if value is not None and not isinstance(value, str):
                    raise ValueError(f"doclens: row #{first_row + i}, field '{name}' must be a string"
                                     + (" ('[0] … [1] …'; a list of units can go to compute() as a keyword)"
                                        if name == "sources" else ""))
        for name in ("reference_claims", "prediction_claims"):
            if stored.get(name) is not None:
                stored[name] = [_store_claims(value, first_row + i, name) for i, value in enumerate(stored[name])]
        return stored

    def add_batch(self, *, predictions: Sequence[str] | None = None, references: Sequence[str] | None = None,
                  **kwargs: Any) -> None:
        """Add a batch of predictions, references and the columns declared at load."""
        kwargs = self._stored(kwargs, self._rows_added)
        result = super().add_batch(predictions=predictions, references=references, **kwargs)
        self._rows_added += len(predictions) if predictions is not None else 0
        return result

    def add(self, *, prediction: str | None = None, reference: str | None = None, **kwargs: Any) -> None:
        """Add one prediction, reference and the columns declared at load."""
        kwargs = {name: value[0] for name, value in self._stored({k: [v] for k, v in kwargs.items()},
                                                                  self._rows_added).items()}
        result = super().add(prediction=prediction, reference=reference, **kwargs)
        self._rows_added += 1
        return result

    def compute(self, *, predictions: Sequence[str] | None = None, references: Sequence[str] | None = None,
                **kwargs: Any) -> dict[str, Any] | None:
        """Compute DocLens; see the module description for the inputs."""
        try:
            return super().compute(predictions=predictions, references=references, **kwargs)
        finally:
            self._rows_added = 0

    def _evaluator(self, evaluator_options: dict[str, Any] | None) -> doclens.Evaluator:
        preset = DEFAULT_PRESET if self.config_name == "default" else self.config_name
        cached = getattr(self, "_loaded_evaluator", None)
        if cached is None or cached[0] != (preset, repr(evaluator_options)):
            cached = ((preset, repr(evaluator_options)), load_evaluator(preset, **(evaluator_options or {})))
            self._loaded_evaluator = cached
        return cached[1]

    def _compute(self, predictions: Sequence[str], references: Sequence[str], sources: Sequence[Any] | None = None,
                 reference_claims: Sequence[Any] | None = None, prediction_claims: Sequence[Any] | None = None,
                 tasks: Sequence[str | None] | None = None, return_report: bool = False,
                 return_instance_scores: bool = False, **options: Any) -> dict[str, object]:
        settings = self._settings(options)
        columns = self._columns(len(predictions), {"sources": sources, "reference_claims": reference_claims,
                                                   "prediction_claims": prediction_claims, "tasks": tasks})
        judge = settings.get("evaluator")
        if judge is None:
            judge = self._evaluator(settings.get("evaluator_options"))
        extractor = settings.get("extractor")
        if isinstance(extractor, str):
            extractor = load_extractor(extractor)
        rows = _rows(predictions, references, columns)
        make = getattr(judge, "make_extractor", None) if extractor is None else None
        if callable(make) and any("reference_claims" not in row or "prediction_claims" not in row for row in rows):
            extractor = make()
        scorer = doclens.DocLens(judge, extractor, settings=settings.get("settings"),
                                 baselines=settings.get("baselines"), baseline_options=settings.get("baseline_options"),
                                 **{name: settings[name] for name in doclens.ScoringSettings.names() if name in settings})
        return _result(scorer.score(rows, progress=False), return_report, return_instance_scores)

    def _settings(self, options: dict) -> dict:
        """The scoring options of this call over those given to ``load``; unknown keywords are an error."""
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ValueError(f"doclens: unknown compute() keyword(s) {unknown}; per-instance inputs are "
                             f"{', '.join(OPTIONAL_INPUTS)}, options are {', '.join(OPTIONS)}, return_report "
                             "and return_instance_scores")
        settings = {**self.scoring_options, **options}
        if settings.get("settings") is None and settings.get("task") is None:
            settings["task"] = AUTO_TASK  # as the command line and the reward: detected per instance
        return settings

    def _columns(self, rows: int, columns: dict) -> dict:
        """The optional per-instance columns, each as long as the predictions, claims read back from
        the stored shape."""
        for name, column in columns.items():
            if column is not None and len(column) != rows:
                raise ValueError(f"doclens: {name} has {len(column)} rows, predictions has {rows}")
        for name in ("reference_claims", "prediction_claims"):
            if name in self.input_columns:  # read back from the stored shape
                columns[name] = [_read_claims(cell) for cell in columns[name]]
        return columns


def _rows(predictions: Sequence[str], references: Sequence[str], columns: dict) -> list[dict]:
    """The scorer's instances: each prediction and reference with the optional columns it has."""
    rows = []
    for i, (prediction, reference) in enumerate(zip(predictions, references)):
        row = {"id": str(i), "prediction": prediction, "reference": reference}
        for name, field in (("sources", "source"), ("reference_claims", "reference_claims"),
                            ("prediction_claims", "prediction_claims"), ("tasks", "task")):
            if columns[name] is not None and columns[name][i] is not None:
                row[field] = columns[name][i]
        rows.append(row)
    return rows


def _result(report: doclens.Report, return_report: bool, return_instance_scores: bool) -> dict[str, object]:
    """``compute()``'s answer: the scores, then the signature, counts and the rest."""
    result: dict[str, object] = dict(report.scores)
    result["signature"] = report.signature
    result["counts"] = report.counts
    if report.sections:
        result["sections"] = report.sections
    if report.baselines:
        result["baselines"] = {name: value["scores"] for name, value in report.baselines.items()}
    if return_report:
        result["report"] = report.to_dict()
    if return_instance_scores:  # each instance's scores, and those its families derive (claim F1)
        families = reported(report.scores)
        result["instance_scores"] = [
            {"id": r.id, **r.scores, **derived_scores(r.scores, families)} for r in report.instances]
    return result
