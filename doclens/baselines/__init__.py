"""Baselines beside DocLens: ROUGE, BERTScore and MEDCON.

The DocLens paper compares its claim and citation scores with these reference-based metrics
(Table 24 for ACI-BENCH: each baseline in total and per note section). :func:`compute_baselines`
runs any of them over plain lists of predictions and references::

    >>> from doclens.baselines import compute_baselines
    >>> result = compute_baselines(["Fever for two days."], ["Fever for 2 days."], ["rouge"])
    >>> round(result["rouge"]["scores"]["rouge1_recall"], 2)
    0.75

Each baseline lives in its own module (:mod:`~doclens.baselines.rouge`,
:mod:`~doclens.baselines.bertscore`, :mod:`~doclens.baselines.medcon`) as pure functions; their
packages come with the ``baselines`` and ``medcon`` extras.
"""

from __future__ import annotations

import logging
from typing import Optional

from doclens.errors import ConfigurationError, InputError
from doclens.sections import SECTION_NAMES, split_note_sections
from doclens.statements import CITATION_GROUP, strip_citations

logger = logging.getLogger(__name__)

BASELINE_NAMES = ("rouge", "bertscore", "medcon")

TASKS = ("general", "note_generation", "report_summarization", "question_summarization")

_ROUGE_OPTIONS = {"use_stemmer"}
_BERTSCORE_OPTIONS = {"model_type", "num_layers", "lang", "rescale_with_baseline", "baseline_path", "idf",
                      "batch_size", "device"}


def metric_keys(name: str) -> tuple[str, ...]:
    """The keys of ``scores`` (and of each section) that baseline ``name`` reports."""
    if name == "rouge":
        from doclens.baselines.rouge import METRIC_KEYS
    elif name == "bertscore":
        from doclens.baselines.bertscore import METRIC_KEYS
    elif name == "medcon":
        from doclens.baselines.medcon import METRIC_KEYS
    else:
        raise ValueError(f"unknown baseline {name!r}; valid names: {', '.join(BASELINE_NAMES)}")
    return METRIC_KEYS


def remove_citation_markers(text: str) -> str:
    """``text`` without citation markers (``[3]``, ``[3, 4]``), line breaks kept.

    A text with no citation marker is returned unchanged.
    """
    if not CITATION_GROUP.search(text):
        return text
    return "\n".join(strip_citations(line) for line in text.split("\n"))


def _check_names(names) -> list[str]:
    if isinstance(names, str):
        names = [part.strip() for part in names.split(",") if part.strip()]
    unknown = [name for name in names if name not in BASELINE_NAMES]
    if unknown:
        raise ValueError(f"unknown baseline(s) {', '.join(map(repr, unknown))}; valid names: "
                         f"{', '.join(BASELINE_NAMES)}")
    return list(dict.fromkeys(names))


def _check_texts(predictions, references) -> None:
    if isinstance(predictions, str) or isinstance(references, str):
        raise InputError("predictions and references must be lists of strings, not a string")
    if len(predictions) != len(references):
        raise InputError(f"{len(predictions)} predictions but {len(references)} references")
    if not predictions:
        raise InputError("no instances to score")
    for field, texts in (("prediction", predictions), ("reference", references)):
        for line, text in enumerate(texts):
            if not isinstance(text, str):
                raise InputError(f"instance {line}: {field} is {type(text).__name__}, not a string",
                                 field=field, line=line)


def _check_options(names: list[str], options: dict) -> None:
    unknown = sorted(set(options) - set(BASELINE_NAMES))
    if unknown:
        raise ValueError(f"options for unknown baseline(s) {', '.join(unknown)}; valid names: "
                         f"{', '.join(BASELINE_NAMES)}")
    for name, allowed in (("rouge", _ROUGE_OPTIONS), ("bertscore", _BERTSCORE_OPTIONS)):
        extra = sorted(set(options.get(name) or {}) - allowed)
        if extra:
            raise ConfigurationError(f"unknown {name} option(s) {', '.join(extra)}; valid: {', '.join(sorted(allowed))}")
    if "medcon" in names and not (options.get("medcon") or {}).get("backend"):
        raise ConfigurationError(
            "MEDCON needs its backend chosen explicitly: options={'medcon': {'backend': 'quickumls', "
            "'quickumls_path': <QuickUMLS index of your UMLS install>}} (the exact ACI-BENCH computation) "
            "or {'medcon': {'backend': 'scispacy', 'kb_path': <knowledge-base JSONL>}} (an approximation)")


def _run(name: str, predictions: list[str], references: list[str], options: dict, progress: bool):
    if name == "rouge":
        from doclens.baselines.rouge import rouge_per_instance

        return rouge_per_instance(predictions, references, progress=progress, **options)
    if name == "bertscore":
        from doclens.baselines.bertscore import bertscore_per_instance

        return bertscore_per_instance(predictions, references, progress=progress, **options)
    from doclens.baselines.medcon import medcon_per_instance

    return medcon_per_instance(predictions, references, progress=progress, **options)


def _mean(rows: list[dict[str, float]], keys: tuple[str, ...]) -> dict[str, float]:
    if not rows:
        return {key: 0.0 for key in keys}
    return {key: float(sum(row[key] for row in rows) / len(rows)) for key in keys}


def compute_baselines(predictions: list[str], references: list[str], names: list[str], *,
                      task: str = "general", options: Optional[dict] = None, progress: bool = False) -> dict:
    """Score predictions against references with the baselines ``names``.

    Parameters
    ----------
    predictions, references : list of str, same length, at least one.
        Citation markers (``[3]``) are removed from predictions first, as DocLens does before
        judging claims; texts without markers are scored exactly as given.
    names : list of str (or a comma-separated str)
        Any of :data:`BASELINE_NAMES`: ``"rouge"``, ``"bertscore"``, ``"medcon"``.
    task : str, default "general"
        With ``"note_generation"`` each note is also split into ACI-BENCH's four divisions
        (:data:`doclens.sections.SECTION_NAMES`) and every baseline is reported per section too.
    options : dict, optional
        Per-baseline settings: ``{"rouge": {"use_stemmer": True}, "bertscore": {"model_type": …,
        "num_layers": …, "rescale_with_baseline": "auto", "baseline_path": …}, "medcon":
        {"backend": "quickumls", "quickumls_path": …}}``. MEDCON has no default backend.
    progress : bool, default False
        Show progress.

    Returns
    -------
    dict
        ``{name: {"scores": {metric: float}, "sections": {section: {metric: float}},
        "per_instance": [{metric: float}, …], "config": {…}}}``. ``scores`` is the mean of the
        per-instance values. ``sections`` is present only for ``task="note_generation"``: a
        section's mean runs over the instances where the reference or the prediction has that
        section (a side without it scores 0.0, as any empty text does); instances where neither
        has it are left out of that section's mean, and ``config["section_support"]`` says over
        how many instances each section's mean runs (0 → its values are 0.0 and mean nothing).

    Edge cases: an empty prediction or reference scores 0.0 on every metric of every baseline;
    no value is ever NaN.

    Raises
    ------
    ValueError
        An unknown baseline name or task.
    ConfigurationError
        MEDCON without a backend, or settings that cannot work.
    MissingExtraError
        A baseline's package is not installed; the message names the extra.
    InputError
        Predictions and references of different lengths, none at all, or not strings.
    """
    names = _check_names(names)
    options = dict(options or {})
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; valid tasks: {', '.join(TASKS)}")
    _check_texts(predictions, references)
    _check_options(names, options)

    predictions = [remove_citation_markers(text) for text in predictions]
    references = list(references)
    count = len(predictions)
    all_predictions, all_references = list(predictions), list(references)
    section_rows: dict[str, list[int]] = {}
    if task == "note_generation":
        split_predictions = [split_note_sections(text) for text in predictions]
        split_references = [split_note_sections(text) for text in references]
        for section in SECTION_NAMES:
            rows = []
            for index in range(count):
                prediction = split_predictions[index][section]
                reference = split_references[index][section]
                if prediction or reference:
                    rows.append(len(all_predictions))
                    all_predictions.append(prediction)
                    all_references.append(reference)
            section_rows[section] = rows

    results = {}
    for name in names:
        logger.info("baseline %s: %d instances, %d texts pairs in all", name, count, len(all_predictions))
        per_pair, config = _run(name, all_predictions, all_references, dict(options.get(name) or {}), progress)
        keys = metric_keys(name)
        per_instance = per_pair[:count]
        config = {**config, "n_instances": count, "task": task,
                  "aggregation": "mean of per-instance values", "citation_markers_removed": "predictions"}
        result = {"scores": _mean(per_instance, keys), "per_instance": per_instance}
        if task == "note_generation":
            result["sections"] = {section: _mean([per_pair[row] for row in rows], keys)
                                  for section, rows in section_rows.items()}
            config["section_support"] = {section: len(rows) for section, rows in section_rows.items()}
            config["section_splitter"] = "doclens.sections.split_note_sections (ACI-BENCH SectionTagger)"
        result["config"] = config
        results[name] = result
    return results


__all__ = ["BASELINE_NAMES", "TASKS", "compute_baselines", "metric_keys", "remove_citation_markers"]
