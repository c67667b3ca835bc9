"""What the ``clinical-rules`` judge reads besides its code and its input, in one object (issue 50):
the drug names and the equivalences (:mod:`~doclens.evaluators.rules.lexicons`), NLTK's Porter
stems (:mod:`~doclens.evaluators.rules.stems`), the reading of each text kept on disk
(:class:`~doclens.evaluators.rules.analysis_cache.AnalysisCache`) and MiniLM's vectors
(:class:`~doclens.evaluators.models.sentence_encoder.VectorCache`).

A :class:`JudgeResources` is made from a cache folder — :meth:`JudgeResources.in_folder` (what
``doclens score`` passes; ``--cache-dir`` names the folder), :meth:`JudgeResources.in_memory`
(``--no-cache``: no file read or written) — handed to
:class:`~doclens.evaluators.rules.clinical_rules.ClinicalRulesJudge` and closed by it:
:meth:`close` writes the stems and readings not written yet (the files reopen on use). Where its
files are is settled when the object is made, never at a first use, and two objects share
nothing: the modules of ``doclens/evaluators/rules/`` keep no cache and register no exit hook of
their own (tests/evaluators/rules/test_rules_state.py checks it), so a judge that is not closed loses what it had
not written yet (its stems, fewer than 2,000, and its readings, fewer than 256), never a verdict.
A judge made without one gets ``JudgeResources()``: the lexicons in the default cache folder, the
readings and vectors kept in memory (as before).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from doclens.evaluators.cache import DEFAULT_LEXICONS, default_cache_dir, lexicon_folder

if TYPE_CHECKING:
    from doclens.evaluators.models.sentence_encoder import VectorCache
    from doclens.evaluators.rules.analysis_cache import AnalysisCache
    from doclens.evaluators.rules.concepts import ConceptLexicon
    from doclens.evaluators.rules.lexicons import Equivalents
    from doclens.evaluators.rules.stems import PorterStems


class JudgeResources:
    """The judge's lexicons, stems and caches (module docstring). ``lexicon_dir``: the folder of the
    derived Porter stems and drug names (:func:`~doclens.evaluators.cache.lexicon_folder`: the
    default cache folder's ``lexicons/``, read now; ``None`` or ``False``: no file); MiniLM's ONNX
    export is kept in ``models/`` beside it (:func:`~doclens.evaluators.cache.models_folder`).
    ``analysis_cache`` / ``vector_cache``: the readings and vectors on disk, or ``None`` (in memory,
    for the judge's life). The lexicons are read at their first use, once an object."""

    def __init__(self, *, lexicon_dir: Any = DEFAULT_LEXICONS, analysis_cache: AnalysisCache | None = None,
                 vector_cache: VectorCache | None = None) -> None:
        self.lexicon_dir: Path | None = lexicon_folder(lexicon_dir)
        self.analysis_cache = analysis_cache
        self.vector_cache = vector_cache
        self._drug_names: dict[str, str] | None = None
        self._equivalents: Equivalents | None = None
        self._concepts: ConceptLexicon | None = None
        self._stems: PorterStems | None = None

    @classmethod
    def in_folder(cls, folder: str | os.PathLike | None = None) -> JudgeResources:
        """Everything in the cache folder ``folder`` (default: :func:`~doclens.evaluators.cache.
        default_cache_dir`, read now): ``lexicons/``, ``analysis.sqlite``, ``vectors.sqlite``."""
        from doclens.evaluators.models.sentence_encoder import VectorCache
        from doclens.evaluators.rules.analysis_cache import AnalysisCache

        place = Path(folder) if folder else default_cache_dir()
        return cls(lexicon_dir=place / "lexicons", analysis_cache=AnalysisCache(place), vector_cache=VectorCache(place))

    @classmethod
    def in_memory(cls) -> JudgeResources:
        """No file read or written (``--no-cache``): the shipped lexicons, stems and readings for
        this object alone."""
        return cls(lexicon_dir=None)

    @property
    def drug_names(self) -> dict[str, str]:
        """Drug name → its generic name (:func:`~doclens.evaluators.rules.lexicons.drug_names`, with
        the judge's own list :data:`~doclens.evaluators.rules.words.DRUGS`)."""
        if self._drug_names is None:
            from doclens.evaluators.rules.lexicons import drug_names
            from doclens.evaluators.rules.words import DRUGS

            self._drug_names = drug_names(DRUGS, self.lexicon_dir)
        return self._drug_names

    @property
    def equivalents(self) -> Equivalents:
        """``clinical_equivalents.json`` read (:func:`~doclens.evaluators.rules.lexicons.equivalents`)."""
        if self._equivalents is None:
            from doclens.evaluators.rules.lexicons import equivalents

            self._equivalents = equivalents()
        return self._equivalents

    @property
    def concepts(self) -> ConceptLexicon:
        """``clinical_concepts.json`` read (:func:`~doclens.evaluators.rules.concepts.read_concepts`, v12)."""
        if self._concepts is None:
            from doclens.evaluators.rules.concepts import read_concepts

            self._concepts = read_concepts()
        return self._concepts

    @property
    def stems(self) -> PorterStems:
        """NLTK's Porter stems, kept in the lexicon folder (:class:`~doclens.evaluators.rules.stems.PorterStems`)."""
        if self._stems is None:
            from doclens.evaluators.rules.stems import PorterStems, stems_path

            self._stems = PorterStems(stems_path(self.lexicon_dir))
        return self._stems

    def close(self) -> None:
        """Write the new stems and the pending readings, and close the cache files (they reopen on
        use). Safe to call twice."""
        if self._stems is not None:
            self._stems.save()
        for store in (self.analysis_cache, self.vector_cache):
            if store is not None:
                store.close()
