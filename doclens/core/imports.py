"""spaCy without torch in DocLens's own processes (``cards/clinical-rules.md``, "Speed").

``import spacy`` imports thinc, whose ``thinc.compat`` imports torch when it is installed, to offer
torch-backed layers: on this project's 2-core machine that was most of the main job's start when
nothing else needed torch (``clinical-rules`` runs MiniLM with ONNX Runtime and reads text with
spaCy's blank English tokenizer, which never touches torch). In a process DocLens owns (the
command line, :func:`lean_imports`), spaCy is imported with torch hidden: thinc then records that it
has no torch, which only spaCy pipelines with torch layers (spacy-transformers), never used by
DocLens's presets, would notice. A library caller's process is left as it is: there the import is
plain, and in a training loop torch is imported already.
"""

from __future__ import annotations

import sys

#: Set by :func:`lean_imports` (the command line) for its own process.
_LEAN = False


def lean_imports(on: bool = True) -> None:
    """Say that this process is DocLens's own (its command line), so spaCy may come without torch."""
    global _LEAN
    _LEAN = on


def import_spacy():
    """``spacy``, imported without torch where :func:`lean_imports` allows and torch is not loaded yet."""
    if not _LEAN or "spacy" in sys.modules or "torch" in sys.modules:
        import spacy

        return spacy
    sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` raises ImportError
    try:
        import spacy
    finally:
        if sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]
    return spacy
