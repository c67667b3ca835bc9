"""BERTScore precision, recall and F1 through ``bert-score``.

The default model is ``microsoft/deberta-xlarge-mnli`` (layer 40), as ACI-BENCH used. A local model
folder works with no network: pass the folder as ``model_type`` and the layer as ``num_layers``.

Baseline rescaling needs a baseline file (``bert-score`` ships them for its named models under
``rescale_baseline/<lang>/<model>.tsv``). ``BERTScorer`` raises when the file is missing and the
functional ``bert_score.score()`` silently skips rescaling; here the choice is explicit and the
result's config says what was done (``rescaled``, ``baseline_path``, ``rescale_note``).

Every token of one text is matched to its most similar token of the other (cosine of the
contextual embeddings from layer ``num_layers``)::

    recall    = 1/|ref|  Σ_{r ∈ ref}  max_{p ∈ pred} cos(r, p)
    precision = 1/|pred| Σ_{p ∈ pred} max_{r ∈ ref}  cos(r, p)
    f1        = 2 · precision · recall / (precision + recall)

(idf-weighted means when ``idf``, with idf from the references). When rescaled, each value
becomes ``(x − b) / (1 − b)`` with the baseline ``b`` of the file: rescaled values can be
negative.
"""

from __future__ import annotations

import contextlib
import logging
import os

from doclens.baselines._util import BaselineUnavailableError, package_version
from doclens.core.errors import ConfigurationError, require

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "microsoft/deberta-xlarge-mnli"

METRIC_KEYS = ("bertscore_precision", "bertscore_recall", "bertscore_f1")

_RESCALE_CHOICES = ("auto", True, False)


def bundled_baseline_path(model_type: str, lang: str = "en") -> str | None:
    """The baseline file ``bert-score`` ships for ``model_type`` and ``lang``, or None."""
    bert_score = require("bert_score", "the BERTScore baseline", "baselines")
    if bert_score.__file__ is None:  # a namespace package (never an installed bert-score): no files to read
        return None
    path = os.path.join(os.path.dirname(bert_score.__file__), "rescale_baseline", lang, f"{model_type}.tsv")
    return path if os.path.isfile(path) else None


def _baseline_has_layer(path: str, num_layers: int) -> bool:
    with open(path, encoding="utf-8") as handle:
        rows = sum(1 for line in handle if line.strip()) - 1  # header line
    return 0 <= num_layers < rows


def resolve_rescaling(rescale_with_baseline, baseline_path: str | None, model_type: str, lang: str,
                      num_layers: int) -> tuple[bool, str | None, str]:
    """Decide whether to rescale: ``(rescale, baseline file, note)``.

    ``rescale_with_baseline`` is ``"auto"`` (rescale when a baseline file exists for this model,
    language and layer, and say so either way), ``True`` (a baseline file must exist, else
    :class:`ConfigurationError`) or ``False`` (raw cosine similarities). An explicit
    ``baseline_path`` that does not exist is always an error.
    """
    if rescale_with_baseline not in _RESCALE_CHOICES:
        raise ConfigurationError(
            f"bertscore rescale_with_baseline must be 'auto', True or False, not {rescale_with_baseline!r}")
    if rescale_with_baseline is False:
        return False, None, "rescaling not requested: raw cosine similarities"
    path: str | None
    if baseline_path is not None:
        if not os.path.isfile(baseline_path):
            raise ConfigurationError(f"bertscore baseline_path {baseline_path!r} is not a file")
        path = baseline_path
    else:
        path = bundled_baseline_path(model_type, lang)
    if path is not None and not _baseline_has_layer(path, num_layers):
        if baseline_path is not None or rescale_with_baseline is True:
            raise ConfigurationError(f"bertscore baseline file {path!r} has no row for layer {num_layers}")
        path = None
    if path is None:
        if rescale_with_baseline is True:
            raise ConfigurationError(
                f"bertscore rescale_with_baseline=True but no baseline file exists for model "
                f"{model_type!r}, language {lang!r}, layer {num_layers}: pass baseline_path, or "
                f"rescale_with_baseline='auto' or False")
        note = (f"not rescaled: no baseline file for model {model_type!r}, language {lang!r}, "
                f"layer {num_layers}; scores are raw cosine similarities")
        logger.warning("BERTScore %s", note)
        return False, None, note
    return True, path, f"rescaled with baseline file {path}"


#: how to give BERTScore a model with no network, named in every load error
_HOW_TO_PROVIDE = ("download it once where the Hub can be reached (it is then read from the local cache; set "
                   "HF_HUB_OFFLINE=1 to never try the network), or pass a local model folder: --baseline-option "
                   "bertscore='{\"model_type\": \"<folder>\", \"num_layers\": N}' (options={'bertscore': "
                   "{'model_type': <folder>, 'num_layers': N}} in Python); `doclens presets` lists the baselines "
                   "and what each needs")


def _looks_like_path(model_type: str) -> bool:
    """A folder path rather than a Hub id (``owner/name`` or ``name``)."""
    return model_type.startswith(("/", ".", "~")) or model_type.count("/") > 1 or os.sep != "/" and os.sep in model_type


def resolve_model(model_type: str) -> tuple[str, str]:
    """Where BERTScore's model comes from, decided in a second with no retries:
    ``(what to load, "local folder" | "local cache" | "hub")``.

    A folder is used as it is; a Hub id found in the local Hugging Face cache is loaded from its
    cached folder (no request at all, online or not); a Hub id not in the cache is downloaded
    only when the Hub answers one quick request. Otherwise :class:`BaselineUnavailableError`
    names what is missing and how to provide it — instead of ``transformers``' minute of
    retries and a raw ``OSError``.
    """
    from huggingface_hub import constants, snapshot_download

    if os.path.isdir(model_type):
        return model_type, "local folder"
    if _looks_like_path(model_type):
        raise BaselineUnavailableError(f"BERTScore model folder {model_type!r} does not exist: {_HOW_TO_PROVIDE}")
    try:
        return snapshot_download(model_type, local_files_only=True), "local cache"
    except Exception:  # not cached (LocalEntryNotFoundError), or an id the cache cannot hold
        pass
    if constants.is_offline_mode() if hasattr(constants, "is_offline_mode") else constants.HF_HUB_OFFLINE:
        raise BaselineUnavailableError(
            f"BERTScore model {model_type!r} is not in the local Hugging Face cache ({constants.HF_HUB_CACHE}) "
            f"and offline mode (HF_HUB_OFFLINE) forbids downloading it: {_HOW_TO_PROVIDE}")
    from huggingface_hub import HfApi

    try:  # one request, no retries: an unreachable Hub fails here in seconds
        HfApi().model_info(model_type, timeout=10)
    except Exception as exc:
        raise BaselineUnavailableError(
            f"BERTScore model {model_type!r} is not in the local Hugging Face cache ({constants.HF_HUB_CACHE}) "
            f"and the Hub cannot provide it ({type(exc).__name__}: {exc}): {_HOW_TO_PROVIDE}") from None
    return model_type, "hub"


def bertscore_per_instance(predictions: list[str], references: list[str], *, model_type: str = DEFAULT_MODEL,
                           num_layers: int | None = None, lang: str = "en", rescale_with_baseline="auto",
                           baseline_path: str | None = None, idf: bool = False, batch_size: int = 64,
                           device: str | None = None, progress: bool = False) -> tuple[list[dict[str, float]], dict]:
    """BERTScore of each (prediction, reference) pair: one call of ``bert-score`` with the checks
    and settings its config records, in order.

    The formulas are the module's (above).

    The model is found by :func:`resolve_model` first: a model that cannot be had fails in seconds
    with :class:`BaselineUnavailableError` (as does a load or a run that fails: files missing, out of
    memory), never after ``transformers``' minute of retries.

    Edge cases: a pair where either side is empty (or only white space) is not sent to the model
    and scores 0.0 for precision, recall and F1. Texts longer than the model's maximum input
    are truncated by ``bert-score``; their number is reported as ``truncated_texts`` in the config
    and logged as a warning.

    Parameters
    ----------
    predictions, references : list of str, same length.
    model_type : str, default ``"microsoft/deberta-xlarge-mnli"``: a model name ``bert-score`` knows, or a local folder.
    num_layers : int, optional
        Layer whose embeddings are compared. Required for a local folder or a model
        ``bert-score`` has no default layer for.
    lang : str, default ``"en"``: the language, used to find the bundled baseline file.
    rescale_with_baseline : {"auto", True, False}, default "auto": see :func:`resolve_rescaling`.
    baseline_path : str, optional: a baseline file of your own.
    idf, batch_size, device : passed to ``bert_score.BERTScorer``.
    progress : bool, default False: let ``bert-score`` print its progress.

    Returns
    -------
    per_instance : list of dict
        One dict per pair with the keys :data:`METRIC_KEYS`.
    config : dict
        model_type, model_source (:func:`resolve_model`), num_layers, lang, idf, rescaled, baseline_path,
        rescale_note, hashcode (``bert-score``'s signature of the setting), versions, truncated_texts, empty_pairs.
    """
    bert_utils = require("bert_score.utils", "the BERTScore baseline", "baselines")
    model_type = os.fspath(model_type)  # a pathlib.Path folder works too
    own_baseline = None if baseline_path is None else os.fspath(baseline_path)
    layer = _layer(bert_utils, model_type, num_layers)
    rescale, used_baseline, note = resolve_rescaling(rescale_with_baseline, own_baseline, model_type, lang, layer)
    keep = [i for i, (p, r) in enumerate(zip(predictions, references)) if p.strip() and r.strip()]
    per_instance = [{key: 0.0 for key in METRIC_KEYS} for _ in predictions]
    load_from, model_source = resolve_model(model_type)  # fails in seconds when the model cannot be had
    kept_predictions, kept_references = [predictions[i] for i in keep], [references[i] for i in keep]
    settings = {"num_layers": layer, "lang": lang, "idf": idf, "idf_sents": kept_references if idf and keep else None,
                "rescale_with_baseline": rescale, "baseline_path": used_baseline if rescale else None,
                "batch_size": batch_size, "device": device}
    (precision, recall, f1), truncated, max_length, on_device = _score_texts(
        bert_utils, (load_from, model_source, model_type), settings, kept_predictions, kept_references, progress)
    if truncated:
        logger.warning("BERTScore: %d text(s) exceed the model's %d tokens and were truncated",
                       truncated, max_length)
    for position, index in enumerate(keep):
        per_instance[index] = dict(zip(METRIC_KEYS, (float(precision[position]), float(recall[position]),
                                                     float(f1[position]))))
    logger.debug("BERTScore scored %d of %d pairs", len(keep), len(predictions))
    config = {"package": "bert-score", "version": package_version("bert-score"),
        "transformers_version": package_version("transformers"),
        "model_type": model_type, "num_layers": layer, "lang": lang, "idf": idf,
        "rescaled": rescale, "baseline_path": used_baseline, "rescale_note": note,
        # bert-score's signature under the model's name, not the cache folder it was loaded from
        "hashcode": bert_utils.get_hash(model_type, layer, idf, rescale, own_baseline is not None, False),
        "model_source": model_source, "device": on_device, "max_length": max_length,
        "truncated_texts": truncated, "empty_pairs": len(predictions) - len(keep), "approximation": False,
    }
    return per_instance, config


def _score_texts(bert_utils, model: tuple[str, str, str], settings: dict, predictions: list[str],
                 references: list[str], progress: bool):
    """Load ``bert_score.BERTScorer`` (``model``: what to load, its source, the name asked for;
    ``settings``: the scorer's other arguments) and score the pairs: ``((precision, recall, f1),
    truncated texts, the length they are truncated to, the device)``. A load or run that fails is
    :class:`BaselineUnavailableError`."""
    bert_score = require("bert_score", "the BERTScore baseline", "baselines")
    load_from, model_source, model_type = model
    try:
        with _progress_bars(progress):  # transformers' "Loading weights" bar, not under -q
            scorer = bert_score.BERTScorer(model_type=load_from, **settings)
        truncated, max_length = _count_truncated(bert_utils, load_from, predictions + references)
        scores = ((), (), ())
        if predictions:
            scores = scorer.score(predictions, references, verbose=progress, batch_size=settings["batch_size"])
    except (OSError, RuntimeError, MemoryError) as exc:  # files missing or unreadable, out of memory
        raise BaselineUnavailableError(f"BERTScore model {model_type!r} ({model_source} {load_from}) could not "
                                       f"be loaded or run: {type(exc).__name__}: {exc}; {_HOW_TO_PROVIDE}") from exc
    return scores, truncated, max_length, str(scorer.device)


@contextlib.contextmanager
def _progress_bars(enabled: bool):
    """``transformers``' progress bars on or off for the block, restored after it."""
    from transformers.utils import logging as transformers_logging

    was_enabled = transformers_logging.is_progress_bar_enabled()
    (transformers_logging.enable_progress_bar if enabled else transformers_logging.disable_progress_bar)()
    try:
        yield
    finally:
        (transformers_logging.enable_progress_bar if was_enabled else transformers_logging.disable_progress_bar)()


def _layer(bert_utils, model_type: str, num_layers: int | None) -> int:
    """The layer to compare: ``num_layers``, or ``bert-score``'s default for a model it knows."""
    if num_layers is not None:
        return num_layers
    if os.path.isdir(model_type):
        raise ConfigurationError(
            f"bertscore model_type {model_type!r} is a local folder: pass num_layers (the layer "
            f"whose embeddings are compared, e.g. the model's number of hidden layers)")
    if model_type not in bert_utils.model2layers:
        raise ConfigurationError(
            f"bert-score has no default layer for {model_type!r}: pass num_layers")
    return bert_utils.model2layers[model_type]


def _count_truncated(bert_utils, model_type: str, texts: list[str]) -> tuple[int, int]:
    """How many of ``texts`` ``bert-score`` truncates, and the length it truncates to."""
    tokenizer = bert_utils.get_tokenizer(model_type, False)
    max_length = int(tokenizer.model_max_length)
    truncated = 0
    for text in texts:
        ids = tokenizer.encode(text, add_special_tokens=True, truncation=False, verbose=False)
        truncated += len(ids) > max_length
    return truncated, max_length
