"""DocLens as ``compute_metrics`` for ``transformers``' ``Trainer`` and ``Seq2SeqTrainer``.

::

    from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments
    from doclens.rewards import DocLensMetric

    metric = DocLensMetric(tokenizer, references=eval_dataset["reference"], task="note_generation")
    trainer = Seq2SeqTrainer(…, args=Seq2SeqTrainingArguments(…, predict_with_generate=True),
                             eval_dataset=eval_dataset, compute_metrics=metric)
    trainer.evaluate()   # {"eval_doclens_claim_recall": …, "eval_doclens_claim_precision": …, …}

The metric decodes the generated ids (the ``-100`` the Trainer pads them with are ignored),
scores them against the references in evaluation-set order with the judge it loaded once, and
returns the report's corpus scores as a flat dict of floats.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from doclens.core.errors import InputError
from doclens.core.settings import ScoringSettings
from doclens.core.tasks import AUTO_TASK
from doclens.evaluators.base import Evaluator
from doclens.extraction.extractors import Extractor
from doclens.families import derived_scores, reported
from doclens.parsing.sections import detect_task
from doclens.reports.report import Report
from doclens.rewards.reward import ClosesItsJudge, make_scorer, reference_claims_cache


class DocLensMetric(ClosesItsJudge):
    """``compute_metrics(EvalPrediction) -> {prefix + score: float}`` (module docstring).

    Parameters
    ----------
    tokenizer
        Decodes the predictions (``batch_decode``; its ``pad_token_id`` replaces ``-100``).
    references : list of str, optional
        The references, in evaluation-set order. ``None``: the labels are decoded instead.
    sources, reference_claims : list, optional
        Per evaluation row, as :meth:`doclens.DocLens.score` takes them (citation metrics need
        sources). Reference claims not given are extracted once per reference and kept.
    prefix : str
        Put before every key (the Trainer adds its own ``eval_``). Default ``"doclens_"``.
    evaluator, extractor, task, evaluator_options, settings, scorer_options
        As for :class:`doclens.rewards.DocLensReward` (default: the offline ``clinical-rules`` judge);
        a row's task is ``task``; unset (or ``"auto"``), it is detected per row from the
        reference (``note_generation`` for a reference with SOAP section headers, else ``general``),
        as the reward and ``doclens score --task auto`` do: a note scored as ``general`` would get no
        per-section claims and no section premise.

    Returned keys: every corpus score of the report that has a value (``claim_recall``,
    ``claim_precision``, their ``_macro`` means, the citation scores when there are sources …)
    and ``claim_f1``, the harmonic mean of the pooled claim recall and precision. A score with
    no value (nothing to score) is left out, as the Trainer logs floats only. The last
    :class:`doclens.Report` is kept in :attr:`last_report` (per-instance results, sections).
    Its judge is closed as the reward's is (:class:`doclens.rewards.reward.ClosesItsJudge`:
    :meth:`close`, ``with``, ``callbacks=[metric.callback()]``, or when collected).
    """

    def __init__(self, tokenizer, references: Sequence[str] | None = None, *,
                 evaluator: str | Evaluator = "clinical-rules", extractor: str | Extractor | None = "auto",
                 sources: Sequence | None = None, reference_claims: Sequence | None = None,
                 task: str | None = None, prefix: str = "doclens_", evaluator_options: dict | None = None,
                 settings: ScoringSettings | None = None, **scorer_options):
        # one judge, kept warm across evaluations
        self.scorer = make_scorer(evaluator, extractor, task=task, evaluator_options=evaluator_options,
                                  settings=settings, **scorer_options)
        self._close_when_collected()  # closed as the reward is (ClosesItsJudge)
        self.claims = reference_claims_cache(self.scorer)
        self.tokenizer = tokenizer
        self.references = None if references is None else list(references)
        self.sources = None if sources is None else list(sources)
        self.reference_claims = None if reference_claims is None else list(reference_claims)
        #: every evaluation row's task: the settings' (checked there); unset or ``auto``: detected per reference
        self.task = self.scorer.settings.task or AUTO_TASK
        self.prefix = prefix
        self.last_report: Report | None = None

    def decode(self, ids: Any) -> list[str]:
        """Token ids (a 2-D array or list of lists, ``-100`` where padded) → texts."""
        import numpy

        if isinstance(ids, tuple):  # some models return (generated ids, …)
            ids = ids[0]
        array = numpy.asarray(ids)
        if array.ndim == 3:
            raise InputError("DocLensMetric: the predictions are logits (3-D), not token ids; evaluate with "
                             "Seq2SeqTrainingArguments(predict_with_generate=True), or give the Trainer "
                             "preprocess_logits_for_metrics that returns generated ids", field="predictions")
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        array = numpy.where(array < 0, pad, array)
        return [text.strip() for text in self.tokenizer.batch_decode(array.tolist(), skip_special_tokens=True)]

    def __call__(self, eval_prediction) -> dict[str, float]:
        predictions = self.decode(eval_prediction.predictions)
        references = self.references if self.references is not None else self.decode(eval_prediction.label_ids)
        for name, column in (("references", references), ("sources", self.sources),
                             ("reference_claims", self.reference_claims)):
            if column is not None and len(column) != len(predictions):
                raise InputError(f"DocLensMetric: {len(predictions)} predictions but {len(column)} {name}; give one "
                                 "per evaluation row, in the evaluation set's order", field=name)
        report = self.scorer.score(self._rows(predictions, references), progress=False)
        self.last_report = report
        scores = {name: value for name, value in report.scores.items() if isinstance(value, (int, float))}
        for name, value in derived_scores(report.scores, reported(report.scores)).items():  # claim F1
            if value is not None:  # the F1 of the pooled sides: the report's own pooled F1
                scores[name] = value
        return {f"{self.prefix}{name}": float(value) for name, value in scores.items()}

    def _rows(self, predictions: list[str], references: Sequence[str]) -> list[dict]:
        """The scorer's rows: each row's task, source and reference claims (given, or extracted once)."""
        rows = []
        for i, (prediction, reference) in enumerate(zip(predictions, references)):
            task = detect_task(reference) if self.task == AUTO_TASK else self.task
            row = {"id": str(i), "prediction": prediction, "reference": reference, "task": task}
            if self.sources is not None and self.sources[i] is not None:
                row["source"] = self.sources[i]
            if self.reference_claims is not None and self.reference_claims[i] is not None:
                row["reference_claims"] = self.reference_claims[i]
            rows.append(row)
        todo = [i for i, row in enumerate(rows) if "reference_claims" not in row]
        for i, claims in zip(todo, self.claims.claims_for([(rows[i]["task"], rows[i]["reference"]) for i in todo])):
            if claims is not None:
                rows[i]["reference_claims"] = claims
        return rows
