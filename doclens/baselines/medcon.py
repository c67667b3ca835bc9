"""MEDCON: F1 of UMLS concepts, as ACI-BENCH computed it (Yim et al., 2023).

Each text is mapped to *terms*, each with the set of UMLS concepts (CUIs) it was linked to;
only concepts of the 66 semantic types in :data:`ACI_BENCH_SEMANTIC_TYPES` count. Then::

    matched   = #{reference terms t : concepts(t) ∩ concepts(prediction) ≠ ∅}
    precision = matched / #prediction terms
    recall    = matched / #reference terms
    f1        = 2 · precision · recall / (precision + recall)

per instance; the corpus score is the mean of the per-instance values.

Two backends, chosen explicitly (``backend=``) and named in the result:

``quickumls``
    QuickUMLS over the user's licensed UMLS index (window 5, threshold 1, Jaccard), the
    computation ACI-BENCH ran. Terms are the UMLS strings QuickUMLS matched.
``scispacy``
    scispaCy's TF-IDF entity linker over a knowledge-base JSONL file, mentions found by an
    EntityRuler over the knowledge base's aliases. An **approximation**, labelled as such.

Neither backend downloads anything: a missing model, stopword list, index or knowledge base is a
:class:`~doclens.core.errors.ConfigurationError` that says what to provide.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
from collections.abc import Iterable, Mapping
from types import SimpleNamespace

from doclens.baselines._util import package_version, progress_bar
from doclens.core.errors import ConfigurationError, require

logger = logging.getLogger(__name__)

METRIC_KEYS = ("medcon_precision", "medcon_recall", "medcon_f1")

BACKENDS = ("quickumls", "scispacy")

#: MetaMap semantic groups (SemGroups 2018) that ACI-BENCH left out of MEDCON.
EXCLUDED_SEMANTIC_GROUPS = ("Procedures", "Organizations", "Occupations", "Living Beings", "Objects",
                            "Geographic Areas", "Concepts & Ideas", "Activities & Behaviors")

#: Semantic types of the groups ACI-BENCH kept, by group (66 types in all).
SEMANTIC_TYPES_BY_GROUP = {
    "Anatomy": ("T017", "T018", "T021", "T022", "T023", "T024", "T025", "T026", "T029", "T030", "T031"),
    "Chemicals & Drugs": ("T103", "T104", "T109", "T114", "T116", "T120", "T121", "T122", "T123", "T125",
                          "T126", "T127", "T129", "T130", "T131", "T192", "T195", "T196", "T197", "T200"),
    "Devices": ("T074", "T075", "T203"),
    "Disorders": ("T019", "T020", "T033", "T037", "T046", "T047", "T048", "T049", "T050", "T184", "T190",
                  "T191"),
    "Genes & Molecular Sequences": ("T028", "T085", "T086", "T087", "T088"),
    "Phenomena": ("T034", "T038", "T067", "T068", "T069", "T070"),
    "Physiology": ("T032", "T039", "T040", "T041", "T042", "T043", "T044", "T045", "T201"),
}

#: The 66 semantic types (TUIs) whose concepts MEDCON counts.
ACI_BENCH_SEMANTIC_TYPES = frozenset(t for types in SEMANTIC_TYPES_BY_GROUP.values() for t in types)

#: The spaCy pipeline QuickUMLS 1.4 loads for English, so the one ACI-BENCH's numbers came from.
QUICKUMLS_SPACY_MODEL = "en_core_web_sm"


def medcon_instance_scores(reference_concepts: Mapping[str, Iterable[str]],
                           prediction_concepts: Mapping[str, Iterable[str]]) -> dict[str, float]:
    """MEDCON precision, recall and F1 of one instance from its ``{term: concepts}`` maps.

    A reference term is *matched* when any of its concepts is among the concepts of the
    prediction; ``precision = matched / #prediction terms``, ``recall = matched / #reference
    terms``, ``f1 = 2PR / (P + R)``.

    Edge cases: no prediction terms gives precision 0.0; no reference terms gives recall 0.0;
    ``P + R = 0`` gives f1 0.0 — so an empty side, or both, scores 0.0 (ACI-BENCH returned 0 for
    these). Because matches are counted over reference terms and divided by the number of
    prediction terms, precision (and so f1) can exceed 1 when several reference terms share
    the concepts of fewer prediction terms (``HTN`` and ``hypertension`` both matched by one
    ``hypertension``); this is ACI-BENCH's definition, kept so numbers compare.

    Returns
    -------
    dict with ``medcon_precision``, ``medcon_recall``, ``medcon_f1``, and the counts
    ``medcon_matched``, ``medcon_reference_terms``, ``medcon_prediction_terms`` (as floats).
    """
    prediction_cuis: set[str] = set()
    for cuis in prediction_concepts.values():
        prediction_cuis.update(cuis)
    matched = sum(1 for cuis in reference_concepts.values() if prediction_cuis.intersection(cuis))
    precision = matched / len(prediction_concepts) if prediction_concepts else 0.0
    recall = matched / len(reference_concepts) if reference_concepts else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {
        "medcon_precision": float(precision),
        "medcon_recall": float(recall),
        "medcon_f1": float(f1),
        "medcon_matched": float(matched),
        "medcon_reference_terms": float(len(reference_concepts)),
        "medcon_prediction_terms": float(len(prediction_concepts)),
    }


# --------------------------------------------------------------------------- QuickUMLS backend

def build_quickumls_index(umls_dir: str, destination: str, *, lowercase: bool = False,
                          normalize_unicode: bool = False, language: str = "ENG",
                          database_backend: str = "unqlite") -> str:
    """Build a QuickUMLS index from ``umls_dir/MRCONSO.RRF`` and ``umls_dir/MRSTY.RRF``.

    Does what ``python -m quickumls.install`` does, without its spaCy model download, and
    defaults to the ``unqlite`` backend (``leveldb`` locks the index to one process). ACI-BENCH
    built its index without ``lowercase``: matching is then case-sensitive, except that an
    all-upper-case span is looked up in lower case. Returns ``destination``.
    """
    install = require("quickumls.install", "the MEDCON quickumls backend", "medcon")
    if database_backend not in ("unqlite", "leveldb"):
        raise ConfigurationError(f"database_backend must be 'unqlite' or 'leveldb', not {database_backend!r}")
    mrconso = os.path.join(umls_dir, "MRCONSO.RRF")
    mrsty = os.path.join(umls_dir, "MRSTY.RRF")
    for path in (mrconso, mrsty):
        if not os.path.isfile(path):
            raise ConfigurationError(f"building a QuickUMLS index needs {path}")
    os.makedirs(destination, exist_ok=True)
    if os.listdir(destination):
        raise ConfigurationError(f"QuickUMLS index destination {destination!r} is not empty")

    # the attributes extract_from_mrconso reads (QuickUMLS's install options)
    opts = SimpleNamespace(lowercase=lowercase, normalize_unicode=normalize_unicode, language=language)
    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        terms = install.extract_from_mrconso(mrconso, mrsty, opts)
        install.parse_and_encode_ngrams(terms, os.path.join(destination, "umls-simstring.db"),
                                        os.path.join(destination, "cui-semtypes.db"),
                                        database_backend=database_backend)
    logger.debug("QuickUMLS install: %s", log.getvalue())
    flags = {"language.flag": language, "database_backend.flag": database_backend}
    if lowercase:
        flags["lowercase.flag"] = ""
    if normalize_unicode:
        flags["normalize-unicode.flag"] = ""
    for name, content in flags.items():
        with open(os.path.join(destination, name), "w", encoding="utf-8") as handle:
            handle.write(content)
    return destination


def _nltk_stopwords_available() -> bool:
    nltk = require("nltk", "the MEDCON quickumls backend", "medcon")
    try:
        nltk.data.find("corpora/stopwords")
        return True
    except LookupError:
        return False


def _load_spacy(model: str):
    spacy = require("spacy", "MEDCON", "medcon")
    if model == "blank":
        return spacy.blank("en")
    try:
        return spacy.load(model)
    except OSError as exc:
        raise ConfigurationError(
            f"MEDCON's quickumls backend needs the spaCy pipeline {model!r}, which is not installed "
            f"(QuickUMLS 1.4 tags with {QUICKUMLS_SPACY_MODEL!r}; install it with "
            f"'python -m spacy download {QUICKUMLS_SPACY_MODEL}'), or pass spacy_model='blank' for a "
            f"tokenizer-only pipeline (an approximation: no part-of-speech tags)") from exc


class QuickUMLSConcepts:
    """Terms and concepts of a text, found by QuickUMLS as ACI-BENCH ran it.

    ``ignore_syntax`` defaults to False: ACI-BENCH asked ``match(text, ignore_syntax=True)``, but
    QuickUMLS 1.4.1 and 1.4.2 (the versions that run on spaCy 3) drop that argument, so the
    published numbers came from QuickUMLS's syntax-aware n-grams. ``ignore_syntax=True`` gives
    what ACI-BENCH's code asked for instead (every token window up to ``window`` tokens).
    """

    def __init__(self, quickumls_path: str, *, window: int = 5, threshold: float = 1.0,
                 similarity_name: str = "jaccard", min_match_length: int = 3,
                 overlapping_criteria: str = "score", semantic_types: Iterable[str] = ACI_BENCH_SEMANTIC_TYPES,
                 spacy_model: str = QUICKUMLS_SPACY_MODEL, ignore_syntax: bool = False, best_match: bool = True):
        quickumls = require("quickumls", "the MEDCON quickumls backend", "medcon")
        if not quickumls_path:
            raise ConfigurationError("MEDCON's quickumls backend needs quickumls_path: the folder of a "
                                     "QuickUMLS index built from your UMLS install (build_quickumls_index)")
        for part in ("umls-simstring.db", "cui-semtypes.db"):
            if not os.path.isdir(os.path.join(quickumls_path, part)):
                raise ConfigurationError(f"{quickumls_path!r} is not a QuickUMLS index (no {part}/ in it)")
        if not _nltk_stopwords_available():
            raise ConfigurationError(
                "QuickUMLS needs NLTK's stopword list (corpora/stopwords/english under a folder named by "
                "NLTK_DATA or nltk.data.path); it would otherwise try to download it. Provide it, e.g. "
                "'python -m nltk.downloader stopwords' on a machine with network")
        self.nlp = _load_spacy(spacy_model)
        self.spacy_model = spacy_model
        self.ignore_syntax = ignore_syntax
        self.best_match = best_match
        self.semantic_types = frozenset(semantic_types)
        self.matcher = quickumls.QuickUMLS(
            quickumls_path, overlapping_criteria=overlapping_criteria, threshold=threshold, window=window,
            similarity_name=similarity_name, min_match_length=min_match_length,
            accepted_semtypes=self.semantic_types, spacy_component=True)
        self.matcher.nlp = self.nlp  # spacy_component=True skips its own spacy.load
        self.settings = {
            "quickumls_path": os.path.abspath(quickumls_path),
            "window": window, "threshold": threshold, "similarity_name": similarity_name,
            "min_match_length": min_match_length, "overlapping_criteria": overlapping_criteria,
            "best_match": best_match, "ignore_syntax": ignore_syntax, "spacy_model": spacy_model,
            "lowercase_index": self.matcher.to_lowercase_flag,
            "database_backend": self.matcher._database_backend,
            "quickumls_version": package_version("quickumls"),
        }

    @property
    def approximation(self) -> bool:
        """Whether this setting departs from the computation behind ACI-BENCH's numbers."""
        return self.spacy_model != QUICKUMLS_SPACY_MODEL or self.ignore_syntax

    def concepts(self, text: str) -> dict[str, set[str]]:
        """``{matched UMLS term: {CUI, …}}`` for ``text`` (empty for an empty text)."""
        if not text.strip():
            return {}
        # match() drops ignore_syntax in QuickUMLS 1.4.1+, so call the matcher it delegates to.
        matches = self.matcher._match(self.nlp(text), best_match=self.best_match,
                                      ignore_syntax=self.ignore_syntax)
        found: dict[str, set[str]] = {}
        for candidates in matches:
            for match in candidates:
                found.setdefault(match["term"], set()).add(match["cui"])
        return found


# --------------------------------------------------------------------------- scispaCy backend

_INDEX_FILES = ("concept_aliases.json", "tfidf_vectorizer.joblib", "tfidf_vectors_sparse.npz", "nmslib_index.bin")


def _build_linker_index(aliases: list[str], index_dir: str | None, ef_search: int):
    """Char-3-gram TF-IDF vectoriser and nmslib HNSW index over ``aliases``.

    scispaCy's ``create_tfidf_ann_index`` refuses scipy ≥ 1.11 and drops 3-grams seen in fewer
    than 10 aliases; this builds the same kind of index with ``min_df=1`` in float32. With
    ``index_dir`` the pieces are saved there, and loaded from there when all are present.
    """
    joblib = require("joblib", "the MEDCON scispacy backend", "medcon")
    nmslib = require("nmslib", "the MEDCON scispacy backend", "medcon")
    numpy = require("numpy", "the MEDCON scispacy backend", "medcon")
    scipy_sparse = require("scipy.sparse", "the MEDCON scispacy backend", "medcon")
    text = require("sklearn.feature_extraction.text", "the MEDCON scispacy backend", "medcon")

    paths = {name: os.path.join(index_dir, name) for name in _INDEX_FILES} if index_dir else None
    index = nmslib.init(method="hnsw", space="cosinesimil_sparse", data_type=nmslib.DataType.SPARSE_VECTOR)
    if paths and all(os.path.isfile(p) for p in paths.values()):
        with open(paths["concept_aliases.json"], encoding="utf-8") as handle:
            kept = json.load(handle)
        vectorizer = joblib.load(paths["tfidf_vectorizer.joblib"])
        vectors = scipy_sparse.load_npz(paths["tfidf_vectors_sparse.npz"]).astype(numpy.float32)
        index.addDataPointBatch(vectors)
        index.loadIndex(paths["nmslib_index.bin"])
    else:
        vectorizer = text.TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 3), min_df=1, dtype=numpy.float32)
        vectors = vectorizer.fit_transform(aliases)
        nonempty = numpy.asarray(vectors.sum(axis=1)).reshape(-1) != 0  # nmslib crashes on zero rows
        kept = [alias for alias, keep in zip(aliases, nonempty) if keep]
        vectors = vectors[nonempty]
        if not kept:
            raise ConfigurationError("no knowledge-base alias has a character 3-gram: nothing to link to")
        index.addDataPointBatch(vectors)
        index.createIndex({"M": 100, "efConstruction": 2000, "post": 0, "indexThreadQty": os.cpu_count() or 1},
                          print_progress=False)
        if paths and index_dir:
            os.makedirs(index_dir, exist_ok=True)
            with open(paths["concept_aliases.json"], "w", encoding="utf-8") as handle:
                json.dump(kept, handle)
            joblib.dump(vectorizer, paths["tfidf_vectorizer.joblib"])
            scipy_sparse.save_npz(paths["tfidf_vectors_sparse.npz"], vectors)
            index.saveIndex(paths["nmslib_index.bin"])
    index.setQueryTimeParams({"efSearch": ef_search})
    return kept, vectorizer, index


class ScispacyConcepts:
    """Terms and concepts of a text from scispaCy's entity linker — an approximation of MEDCON.

    Mentions are the spans an EntityRuler finds from the knowledge base's aliases (case-insensitive,
    longest first); each is linked by scispaCy's TF-IDF candidate generator and kept with the
    candidates scoring above ``threshold`` whose semantic types are accepted. The term is the
    mention text, lower-cased.

    ``kb_path`` is a local scispaCy knowledge-base file (JSON lines of ``concept_id``,
    ``canonical_name``, ``aliases``, ``types``, ``definition``), e.g. one made from your UMLS
    install. Nothing is downloaded: an empty knowledge base is an error rather than scispaCy's
    fallback to downloading UMLS.
    """

    def __init__(self, kb_path: str, *, semantic_types: Iterable[str] = ACI_BENCH_SEMANTIC_TYPES,
                 threshold: float = 0.7, k: int = 30, max_entities_per_mention: int = 5,
                 ef_search: int = 200, index_dir: str | None = None):
        linking = require("scispacy.linking", "the MEDCON scispacy backend", "medcon")
        candidates = require("scispacy.candidate_generation", "the MEDCON scispacy backend", "medcon")
        linking_utils = require("scispacy.linking_utils", "the MEDCON scispacy backend", "medcon")
        spacy = require("spacy", "the MEDCON scispacy backend", "medcon")
        if not kb_path or not os.path.isfile(kb_path):
            raise ConfigurationError(
                f"MEDCON's scispacy backend needs kb_path, a local knowledge-base JSONL file; {kb_path!r} is not one")
        self.semantic_types = frozenset(semantic_types)
        self.kb = linking_utils.KnowledgeBase(kb_path)
        if not self.kb.alias_to_cuis:
            raise ConfigurationError(f"knowledge base {kb_path!r} has no entities")
        aliases = sorted(self.kb.alias_to_cuis)
        kept, vectorizer, index = _build_linker_index(aliases, index_dir, ef_search)
        generator = candidates.CandidateGenerator(ann_index=index, tfidf_vectorizer=vectorizer,
                                                  ann_concept_aliases_list=kept, kb=self.kb)
        self.linker = linking.EntityLinker(candidate_generator=generator, resolve_abbreviations=False, k=k,
                                           threshold=threshold, filter_for_definitions=False,
                                           max_entities_per_mention=max_entities_per_mention)
        self.nlp = spacy.blank("en")
        ruler = self.nlp.add_pipe("entity_ruler", config={"phrase_matcher_attr": "LOWER"})
        patterns = [{"label": "CONCEPT", "pattern": alias}
                    for alias, cuis in self.kb.alias_to_cuis.items()
                    if alias.strip() and any(self._accepted(cui) for cui in cuis)]
        ruler.add_patterns(patterns)
        self.settings = {
            "kb_path": os.path.abspath(kb_path), "kb_entities": len(self.kb.cui_to_entity),
            "kb_aliases": len(aliases), "mentions": "EntityRuler over knowledge-base aliases (lower-cased)",
            "threshold": threshold, "k": k, "max_entities_per_mention": max_entities_per_mention,
            "filter_for_definitions": False, "ef_search": ef_search,
            "index": "char-3-gram TF-IDF (min_df=1) + nmslib HNSW",
            "scispacy_version": package_version("scispacy"),
        }

    approximation = True

    def _accepted(self, cui: str) -> bool:
        entity = self.kb.cui_to_entity.get(cui)
        return entity is not None and bool(self.semantic_types.intersection(entity.types))

    def concepts(self, text: str) -> dict[str, set[str]]:
        """``{mention (lower-cased): {CUI, …}}`` for ``text`` (empty for an empty text)."""
        if not text.strip():
            return {}
        doc = self.linker(self.nlp(text))
        found: dict[str, set[str]] = {}
        for entity in doc.ents:
            cuis = {cui for cui, _score in entity._.kb_ents if self._accepted(cui)}
            if cuis:
                found.setdefault(entity.text.lower(), set()).update(cuis)
        return found


# --------------------------------------------------------------------------- entry point

_QUICKUMLS_OPTIONS = {"quickumls_path", "window", "threshold", "similarity_name", "min_match_length",
                      "overlapping_criteria", "semantic_types", "spacy_model", "ignore_syntax", "best_match"}
_SCISPACY_OPTIONS = {"kb_path", "semantic_types", "threshold", "k", "max_entities_per_mention", "ef_search",
                     "index_dir"}


def make_concept_extractor(backend: str | None, **options):
    """The concept extractor of ``backend`` (``"quickumls"`` or ``"scispacy"``), configured by ``options``."""
    if backend is None:
        raise ConfigurationError(
            "MEDCON needs a backend chosen explicitly: options={'medcon': {'backend': 'quickumls', "
            "'quickumls_path': ...}} (exact, over your UMLS install) or {'backend': 'scispacy', "
            "'kb_path': ...} (an approximation)")
    if backend not in BACKENDS:
        raise ConfigurationError(f"unknown MEDCON backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    allowed = _QUICKUMLS_OPTIONS if backend == "quickumls" else _SCISPACY_OPTIONS
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ConfigurationError(f"unknown option(s) for MEDCON backend {backend!r}: {', '.join(unknown)}; "
                                 f"valid: {', '.join(sorted(allowed))}")
    if backend == "quickumls":
        path = options.pop("quickumls_path", None)
        return QuickUMLSConcepts(path, **options)
    path = options.pop("kb_path", None)
    return ScispacyConcepts(path, **options)


def medcon_per_instance(predictions: list[str], references: list[str], *, backend: str | None = None,
                        extractor=None, progress: bool = False, **backend_options) -> tuple[list[dict[str, float]], dict]:
    """MEDCON precision, recall and F1 of each (prediction, reference) pair.

    See :func:`medcon_instance_scores` for the formula and edge cases (an empty side scores 0.0).

    Parameters
    ----------
    predictions, references : list of str, same length.
    backend : {"quickumls", "scispacy"}
        Required; no default, so that an approximation is never taken for the exact metric.
    extractor : QuickUMLSConcepts or ScispacyConcepts, optional
        A ready extractor (reused across calls); ``backend`` must name its kind.
    **backend_options
        Passed to :class:`QuickUMLSConcepts` (``quickumls_path``, ``window``, ``threshold``,
        ``spacy_model``, ``ignore_syntax`` …) or :class:`ScispacyConcepts` (``kb_path``,
        ``threshold``, ``index_dir`` …).

    Returns
    -------
    per_instance : list of dict
        :data:`METRIC_KEYS` plus the term counts, per pair.
    config : dict
        backend, approximation (bool) and the backend's settings.
    """
    if extractor is None:
        extractor = make_concept_extractor(backend, **backend_options)
    elif backend is None:
        raise ConfigurationError("MEDCON: name the backend of the extractor you pass")
    cache: dict[str, dict[str, set[str]]] = {}

    def concepts(text: str) -> dict[str, set[str]]:
        if text not in cache:
            cache[text] = extractor.concepts(text)
        return cache[text]

    per_instance = []
    for prediction, reference in progress_bar(zip(predictions, references), total=len(predictions),
                                              desc="MEDCON", enabled=progress):
        per_instance.append(medcon_instance_scores(concepts(reference), concepts(prediction)))
    logger.debug("MEDCON (%s) scored %d pairs", backend, len(per_instance))
    config = {
        "backend": backend,
        "approximation": bool(extractor.approximation),
        "semantic_types": "ACI-BENCH (66 types)" if extractor.semantic_types == ACI_BENCH_SEMANTIC_TYPES
        else sorted(extractor.semantic_types),
        **extractor.settings,
    }
    if backend == "scispacy":
        config["approximation_note"] = ("scispaCy TF-IDF entity linking, not QuickUMLS: "
                                        "an approximation of ACI-BENCH's MEDCON")
    elif extractor.approximation:
        config["approximation_note"] = (
            "departs from ACI-BENCH's run: " + "; ".join(
                part for part in (
                    f"spaCy pipeline {extractor.spacy_model!r} instead of {QUICKUMLS_SPACY_MODEL!r}"
                    if extractor.spacy_model != QUICKUMLS_SPACY_MODEL else "",
                    "ignore_syntax=True (what ACI-BENCH asked for, not what QuickUMLS 1.4.1+ ran)"
                    if extractor.ignore_syntax else "") if part))
    return per_instance, config
