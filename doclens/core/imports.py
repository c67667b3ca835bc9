"""spaCy without torch in DocLens's own processes (``cards/clinical-rules.md``, "Speed").

``import spacy`` imports thinc, whose ``thinc.compat`` imports torch when it is installed, to offer
torch-backed layers: on this project's 2-core machine that was most of the main job's start when
nothing else needed torch (``clinical-rules`` runs MiniLM with ONNX Runtime and reads text with
spaCy's blank English tokenizer, which never touches torch). In a process DocLens owns (the
command line, :func:`lean_imports`), spaCy is imported with torch hidden: thinc then records that it
has no torch, which only spaCy pipelines with torch layers (spacy-transformers), never used by
DocLens's presets, would notice. A library caller's process is left as it is: there the import is
plain, and in a training loop torch is imported already.

In the same processes spaCy comes without its command line: ``spacy/__init__`` imports
``spacy.cli.info`` for ``spacy.info``, and with it all of ``spacy.cli`` (typer, click, weasel, httpx,
requests, rich): a third of the import's CPU (0.2 of 0.63 s, issue 49), for commands DocLens never
runs. :func:`import_spacy` lets ``spacy/__init__`` find a stand-in for those two modules, removed
afterwards: ``spacy.info`` then imports the real one when called, and ``import spacy.cli`` imports
the real package.
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
    stand_ins = _without_spacy_cli()
    try:
        import spacy
    finally:
        if sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
        if "spacy" in sys.modules and getattr(sys.modules["spacy"], "cli", None) is stand_ins.get("spacy.cli"):
            vars(sys.modules["spacy"]).pop("cli", None)  # `import spacy.cli` imports the real package
    return spacy


def _without_spacy_cli() -> dict:
    """Stand-ins for ``spacy.cli`` and ``spacy.cli.info``, put in ``sys.modules`` (module docstring);
    none where spaCy is not installed."""
    import importlib.util
    import types
    from pathlib import Path

    spec = importlib.util.find_spec("spacy")
    if spec is None or spec.origin is None:
        return {}
    package = types.ModuleType("spacy.cli")
    package.__path__ = [str(Path(spec.origin).parent / "cli")]
    info = types.ModuleType("spacy.cli.info")

    def spacy_info(*args, **kwargs):
        """spaCy's ``spacy.info``, imported at its first call (:func:`import_spacy`)."""
        from spacy.cli.info import info as real

        return real(*args, **kwargs)

    info.info = spacy_info  # type: ignore[attr-defined]
    stand_ins = {"spacy.cli": package, "spacy.cli.info": info}
    sys.modules.update(stand_ins)
    return stand_ins
