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
from typing import Literal, get_args

from doclens.baselines._util import BaselineUnavailableError
from doclens.core.errors import ConfigurationError, DocLensError, InputError, MissingExtraError
from doclens.core.tasks import TASKS, Task
from doclens.parsing.sections import LINE_BREAK_TOKEN, SECTION_NAMES, note_section_spans, split_note_sections
from doclens.parsing.statements import CITATION_GROUP, strip_citations

logger = logging.getLogger(__name__)

BASELINE_NAMES = ("rouge", "bertscore", "medcon")

#: what each baseline is and what it needs to run (``doclens presets`` lists them)
BASELINE_DESCRIPTIONS = {
    "rouge": "ROUGE-1/2/L/Lsum F1, P, R (rouge-score; evaluate's defaults: no stemming, ROUGE-Lsum on the text's "
             "lines); nothing to download ([baselines] extra)",
    "bertscore": "BERTScore P, R, F1 (bert-score); model microsoft/deberta-xlarge-mnli layer 40 from the local "
                 "Hugging Face cache, or a local folder: bertscore='{\"model_type\": \"<folder>\", \"num_layers\": N}' "
                 "([baselines] extra; HF_HUB_OFFLINE=1 never tries the network)",
    "medcon": "MEDCON, UMLS concept F1 of ACI-BENCH; needs your licensed UMLS: medcon='{\"backend\": \"quickumls\", "
              "\"quickumls_path\": \"<index>\"}' (or backend scispacy, an approximation) ([medcon] extra)",
}


#: How note divisions are scored (``task="note_generation"``; the full-note scores do not depend on
#: it except for ``__lf1__``, see :func:`compute_baselines`). ``"doclens"`` (default): each
#: division's text with its line breaks, stripped, averaged over the notes where either side has
#: the division. ``"aci-bench"``: ACI-BENCH's ``evaluate_fullnote.py`` exactly
#: (:func:`aci_bench_divisions`: line breaks inside a division become ``__lf1__``, gluing words
#: across lines into one token; a division a note lacks is scored as ``#####EMPTY#####`` — MEDCON
#: 0, ROUGE and BERTScore 1.0 where both sides lack it; each division is averaged over all notes) —
#: use it to compare with ACI-BENCH's published division numbers. ``cards/baselines.md`` says more.
DivisionProcedure = Literal["doclens", "aci-bench"]
DIVISION_PROCEDURES: tuple[DivisionProcedure, ...] = get_args(DivisionProcedure)

#: What a baseline that cannot run does (:func:`compute_baselines`): raise, or record the failure.
OnFailure = Literal["raise", "record"]
ON_FAILURE: tuple[OnFailure, ...] = get_args(OnFailure)

#: What ACI-BENCH scored for a division one note lacks while other notes have it (pandas
#: ``fillna`` in ``evaluate_fullnote.py``).
ACI_BENCH_EMPTY_DIVISION = "#####EMPTY#####"

_ROUGE_OPTIONS = {"use_stemmer", "sentence_splitter", "rouge_types"}
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
        raise ConfigurationError(f"unknown baseline(s) {', '.join(map(repr, unknown))}; valid names: "
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
        raise ConfigurationError(f"options for unknown baseline(s) {', '.join(map(repr, unknown))}; valid names: "
                                 f"{', '.join(BASELINE_NAMES)}")
    for name, allowed in (("rouge", _ROUGE_OPTIONS), ("bertscore", _BERTSCORE_OPTIONS)):
        extra = sorted(set(options.get(name) or {}) - allowed)
        if extra:
            raise ConfigurationError(f"unknown {name} option(s) {', '.join(extra)}; valid: {', '.join(sorted(allowed))}")
    if "medcon" in names and not (options.get("medcon") or {}).get("backend"):
        raise ConfigurationError(
            "MEDCON needs its backend chosen explicitly: either QuickUMLS over your own UMLS install (the exact "
            "ACI-BENCH computation), --baseline-option medcon='{\"backend\": \"quickumls\", \"quickumls_path\": "
            "\"/path/to/quickumls-index\"}', or scispaCy over a knowledge-base file (an approximation), "
            "--baseline-option medcon='{\"backend\": \"scispacy\", \"kb_path\": \"/path/to/kb.jsonl\"}' "
            "(in Python: baseline_options={\"medcon\": {\"backend\": …}}; cards/baselines.md)")


def _run(name: str, predictions: list[str], references: list[str], options: dict, progress: bool):
    if name == "rouge":
        from doclens.baselines.rouge import rouge_per_instance

        return rouge_per_instance(predictions, references, progress=progress, **options)
    if name == "bertscore":
        from doclens.baselines.bertscore import bertscore_per_instance

        return bertscore_per_instance(predictions, references, progress=progress, **options)
    from doclens.baselines.medcon import medcon_per_instance

    return medcon_per_instance(predictions, references, progress=progress, **options)


def aci_bench_divisions(texts: list[str]) -> dict[str, list[str]]:
    """ACI-BENCH's division texts, exactly as its ``evaluate_fullnote.py`` built them.

    For each note: ``__lf1__`` is turned into a line break, the note is divided by ACI-BENCH's
    section tagger (:func:`doclens.parsing.sections.note_section_spans`), and each division's text —
    not stripped — has its line breaks turned back into ``__lf1__``, which glues the last word of
    one line and the first word of the next into one token for every metric. A division a note
    lacks is :data:`ACI_BENCH_EMPTY_DIVISION` when some other note has it, and ``""`` when no
    note has it. Returns ``{division: [text of note 0, note 1, …]}``.
    """
    found: dict[str, list] = {section: [None] * len(texts) for section in SECTION_NAMES}
    for index, text in enumerate(texts):
        with_breaks = text.replace(LINE_BREAK_TOKEN, "\n")
        for section, start, end in note_section_spans(with_breaks):
            found[section][index] = with_breaks[start:end].replace("\n", LINE_BREAK_TOKEN)
    divisions = {}
    for section, values in found.items():
        fill = ACI_BENCH_EMPTY_DIVISION if any(value is not None for value in values) else ""
        divisions[section] = [fill if value is None else value for value in values]
    return divisions


def _division_rows(predictions: list[str], references: list[str], procedure: str):
    """``(texts to score as (prediction, reference) pairs, {section: rows of those pairs})``."""
    pairs: list[tuple[str, str]] = []
    rows: dict[str, list[int]] = {}
    if procedure == "aci-bench":
        divided_predictions, divided_references = aci_bench_divisions(predictions), aci_bench_divisions(references)
        for section in SECTION_NAMES:  # every note, a missing division included
            rows[section] = list(range(len(pairs), len(pairs) + len(predictions)))
            pairs += list(zip(divided_predictions[section], divided_references[section]))
        return pairs, rows
    split_predictions = [split_note_sections(text) for text in predictions]
    split_references = [split_note_sections(text) for text in references]
    for section in SECTION_NAMES:  # only notes where either side has the division
        rows[section] = []
        for prediction, reference in zip(split_predictions, split_references):
            if prediction[section] or reference[section]:
                rows[section].append(len(pairs))
                pairs.append((prediction[section], reference[section]))
    return pairs, rows


def _mean(rows: list[dict[str, float]], keys: tuple[str, ...]) -> dict[str, float]:
    if not rows:
        return {key: 0.0 for key in keys}
    return {key: float(sum(row[key] for row in rows) / len(rows)) for key in keys}


def compute_baselines(predictions: list[str], references: list[str], names: list[str], *,
                      task: str = "general", options: dict | None = None, progress: bool = False,
                      divisions: DivisionProcedure = "doclens", remove_citations: bool = True,
                      on_failure: OnFailure = "raise") -> dict:
    """Score predictions against references with the baselines ``names``.

    Parameters
    ----------
    predictions, references : list of str, same length, at least one.
        Citation markers (``[3]``) are removed from predictions first, as DocLens does before
        judging claims. ``__lf1__`` (ACI-BENCH's one-line file encoding of a line break) is read
        as a line break in predictions and references, except for the full notes under
        ``divisions="aci-bench"``, which are scored as given, as ACI-BENCH did. Texts without
        markers are otherwise scored exactly as given.
    names : list of str (or a comma-separated str)
        Any of :data:`BASELINE_NAMES`: ``"rouge"``, ``"bertscore"``, ``"medcon"``.
    task : str, default "general"
        With ``"note_generation"`` each note is also split into ACI-BENCH's four divisions
        (:data:`doclens.parsing.sections.SECTION_NAMES`) and every baseline is reported per section too.
    options : dict, optional
        Per-baseline settings, each baseline's keyword arguments: ``{"rouge": {"use_stemmer": True}, "bertscore":
        {"model_type": …, "num_layers": …}, "medcon": {"backend": "quickumls", "quickumls_path": …}}``
        (:func:`.rouge.rouge_per_instance`, :func:`.bertscore.bertscore_per_instance`,
        :func:`.medcon.medcon_per_instance` say what each takes). MEDCON has no default backend.
    progress : bool, default False: show progress.
    remove_citations : bool, default True
        Remove citation markers (``[3]``) from predictions first. ``False`` scores predictions
        exactly as given (what a published table did: ACI-BENCH's LED outputs contain ``[n]``
        strings as text); ``config["citation_markers_removed"]`` says which.
    on_failure : {"raise", "record"}, default "raise"
        What a baseline that cannot run does (its model cannot be loaded: offline, a missing
        folder, out of memory — :class:`BaselineUnavailableError`; or any other error while it
        runs): raise, or, with ``"record"``, leave ``{"failed": True, "error": <message>,
        "scores": {}, "config": {…}}`` in its place while the other baselines still run
        (``doclens score`` records, so that a failing baseline never costs the judged work).
    divisions : {"doclens", "aci-bench"}, default "doclens"
        How ``note_generation`` divisions are scored: :data:`DIVISION_PROCEDURES` says how the two
        differ. A baseline's own options may also carry ``"divisions"``, which wins for that
        baseline (so the CLI's ``--baseline-option medcon='{"divisions": "aci-bench"}'`` works).

    Returns
    -------
    dict
        ``{name: {"scores": {metric: float}, "sections": {section: {metric: float}},
        "per_instance": [{metric: float}, …], "config": {…}}}``. ``scores`` is the mean of the
        per-instance values. ``sections`` is present only for ``task="note_generation"``: with
        ``divisions="doclens"`` a section's mean runs over the instances where the reference or
        the prediction has that section (a side without it scores 0.0, as any empty text does);
        instances where neither has it are left out of that section's mean; with
        ``"aci-bench"`` it runs over all instances. ``config["section_support"]`` says over how
        many instances each section's mean runs (0 → its values are 0.0 and mean nothing) and
        ``config["divisions"]`` which procedure was used. An empty prediction or reference scores
        0.0 on every metric of every baseline; no value is ever NaN.

    Raises ``ValueError`` (an unknown baseline name or task), :class:`ConfigurationError` (MEDCON
    without a backend, or settings that cannot work), :class:`MissingExtraError` (a baseline's
    package is not installed; the message names the extra), :class:`BaselineUnavailableError` (a
    baseline's model cannot be loaded, with ``on_failure="raise"``; the message names what is
    missing and how to provide it) and :class:`InputError` (predictions and references of
    different lengths, none at all, or not strings).
    """
    names, options, procedures = check_baseline_settings(names, options, task=task, divisions=divisions)
    if on_failure not in ON_FAILURE:
        raise ValueError(f"on_failure must be 'raise' or 'record', not {on_failure!r}")
    texts, common = _inputs(predictions, references, set(procedures.values()), task, remove_citations)
    return {name: _score_or_record(name, texts[procedures[name]], dict(options.get(name) or {}), progress,
                                   (common, {"divisions": procedures[name]} if task == Task.NOTE_GENERATION else {}),
                                   on_failure)
            for name in names}


def _inputs(predictions: list[str], references: list[str], procedures: set[str], task: str,
            remove_citations: bool) -> tuple[dict, dict]:
    """The texts to score (:func:`_texts_to_score`) per division procedure, and the config every
    baseline's result shares; :class:`InputError` for texts that cannot be scored."""
    _check_texts(predictions, references)
    given = [remove_citation_markers(text) for text in predictions] if remove_citations else list(predictions)
    texts = {procedure: _texts_to_score(given, list(references), procedure, task) for procedure in sorted(procedures)}
    common = {"n_instances": len(given), "task": task, "aggregation": "mean of per-instance values",
              "citation_markers_removed": "predictions" if remove_citations else "none"}
    return texts, common


def _score_or_record(name: str, texts: tuple, options: dict, progress: bool, configs: tuple[dict, dict],
                     on_failure: OnFailure) -> dict:
    """:func:`_score_one` (its config: the run's ``common`` and this baseline's ``divided`` settings
    of ``configs``), or with ``on_failure="record"`` the failure's record in its place (``common`` only)."""
    common, divided = configs
    try:
        return _score_one(name, texts, options, progress, {**common, **divided})
    except Exception as exc:  # noqa: BLE001 - "record": no baseline failure may cost the caller's other work
        if on_failure == "raise":
            raise
        logger.debug("baseline %s failed", name, exc_info=True)  # the caller reports it once
        error = str(exc) if isinstance(exc, DocLensError) else f"{type(exc).__name__}: {exc}"
        return {"failed": True, "error": error, "scores": {}, "per_instance": [],
                "config": {**common, "failed": True}}


def check_baseline_settings(names, options: dict | None = None, *, task: str = "general",
                            divisions: DivisionProcedure = "doclens") -> tuple[list[str], dict, dict]:
    """Check baseline names and options without loading anything (a run checks them before it
    judges anything): ``(names, options per baseline, division procedure per baseline)``.
    Raises ``ValueError`` or :class:`ConfigurationError` naming the bad name or option."""
    names = _check_names(names)
    for name, value in (options or {}).items():
        if value is not None and not isinstance(value, dict):
            raise ConfigurationError(f"--baseline-option {name} must be a JSON object such as "
                                     f"{name}='{{\"use_stemmer\": true}}' (in Python, a dict), got {value!r}")
    options = {name: dict(value or {}) for name, value in (options or {}).items()}
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; valid tasks: {', '.join(TASKS)}")
    procedures = {name: (options.get(name) or {}).pop("divisions", divisions) for name in names}
    for name, procedure in procedures.items():
        if procedure not in DIVISION_PROCEDURES:
            raise ConfigurationError(f"{name}: divisions must be one of {', '.join(DIVISION_PROCEDURES)}, "
                                     f"not {procedure!r}")
    _check_options(names, options)
    for name in names:
        _check_installed(name)
    return names, options, procedures


#: the package each baseline cannot start without, and its extra
_PACKAGES = {"rouge": ("rouge_score", "baselines"), "bertscore": ("bert_score", "baselines"),
             "medcon": ("spacy", "medcon")}


def _check_installed(name: str) -> None:
    """:class:`MissingExtraError` now, not after a judged run, when a baseline's package is absent."""
    import importlib.util

    module, extra = _PACKAGES[name]
    if importlib.util.find_spec(module) is None:
        raise MissingExtraError(f"the {name} baseline", extra, module)


def _texts_to_score(predictions: list[str], references: list[str], procedure: str, task: str):
    """``(predictions, references, {section: rows})``: the full notes first (``__lf1__`` read as a
    line break, except under ACI-BENCH's procedure, which scored full notes as read), then each
    division's pairs for ``note_generation``; ``rows`` index those pairs."""
    if procedure != "aci-bench":
        predictions = [text.replace(LINE_BREAK_TOKEN, "\n") for text in predictions]
        references = [text.replace(LINE_BREAK_TOKEN, "\n") for text in references]
    if task != Task.NOTE_GENERATION:
        return predictions, references, {}
    pairs, section_rows = _division_rows(predictions, references, procedure)
    count = len(predictions)
    return (predictions + [p for p, _ in pairs], references + [r for _, r in pairs],
            {section: [count + row for row in rows] for section, rows in section_rows.items()})


def _score_one(name: str, texts: tuple, options: dict, progress: bool, common: dict) -> dict:
    """One baseline's result over the full notes and division pairs of ``texts``."""
    all_predictions, all_references, section_rows = texts
    count = common["n_instances"]
    logger.info("baseline %s: %d instances, %d text pairs in all", name, count, len(all_predictions))
    per_pair, config = _run(name, all_predictions, all_references, options, progress)
    keys = tuple(per_pair[0]) if per_pair else metric_keys(name)  # a chosen subset (rouge_types)
    per_instance = per_pair[:count]
    result = {"scores": _mean(per_instance, keys), "per_instance": per_instance}
    config = {**config, **common}
    if section_rows:
        result["sections"] = {section: _mean([per_pair[row] for row in rows], keys)
                              for section, rows in section_rows.items()}
        config["section_support"] = {section: len(rows) for section, rows in section_rows.items()}
        config["section_splitter"] = "doclens.parsing.sections.split_note_sections (ACI-BENCH SectionTagger)"
    result["config"] = config
    return result


__all__ = ["ACI_BENCH_EMPTY_DIVISION", "BASELINE_NAMES", "BASELINE_DESCRIPTIONS", "BaselineUnavailableError",
           "check_baseline_settings", "DIVISION_PROCEDURES", "DivisionProcedure", "ON_FAILURE", "OnFailure", "TASKS",
           "aci_bench_divisions",
           "compute_baselines", "metric_keys", "remove_citation_markers"]
