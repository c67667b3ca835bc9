"""The version of ``clinical-rules``' rules that its signature carries: the human version
(:data:`~doclens.evaluators.rules.clinical_rules.RULES_VERSION`, ``12``) and a digest of the files
that decide its verdicts, ``rule-based:v12-<8 hex>`` (issue 50: the version changed only when
someone remembered to change it; now any change to a rule or a table changes it).

The digest (:func:`rules_digest`) is SHA-256 over every ``.py`` and ``.json`` file directly in
``doclens/evaluators/rules/`` (:func:`rules_files`) but those of :data:`NOT_RULES`, in name order,
each as its file name and its bytes with line endings written ``\\n``: the same on every install
and platform (no path, no line ending, no modification time enters it), read through
:mod:`importlib.resources` so an installed wheel gives what a checkout gives
(tests/evaluators/rules/test_rules_state.py recomputes it from the files, and checks a changed table changes it).
"""

from __future__ import annotations

import hashlib
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from types import MappingProxyType

#: Files of ``doclens/evaluators/rules/`` that decide no ``clinical-rules`` verdict, each with why
#: (every other ``.py`` and ``.json`` file there is in the digest; the shipped adapter's files, in
#: ``adapter/``, are not directly there).
NOT_RULES = MappingProxyType({
    "adapter.py": "the minilm-adapter judge, with its own signature",
    "overlap.py": "the overlap judge, with its own signature",
    "fit.py": "doclens judge-fit; the model it fits is named in the signature by its fingerprint",
})
#: the kinds of file the digest reads: the rules' code and their tables
SUFFIXES = (".py", ".json")
#: hex digits of the digest in the signature
DIGEST_LENGTH = 8


def _folder(folder: Traversable | Path | None) -> Traversable | Path:
    return resources.files("doclens.evaluators.rules") if folder is None else folder


def rules_files(folder: Traversable | Path | None = None) -> list[str]:
    """The names of the files the digest reads, in order; ``folder``: a copy of the rules' folder
    (default: the installed package's)."""
    folder = _folder(folder)
    return sorted(entry.name for entry in folder.iterdir()
                  if entry.is_file() and entry.name.endswith(SUFFIXES) and entry.name not in NOT_RULES)


def rules_digest(folder: Traversable | Path | None = None) -> str:
    """:data:`DIGEST_LENGTH` hex digits of SHA-256 over :func:`rules_files` (module docstring);
    ``folder`` as there."""
    folder = _folder(folder)
    digest = hashlib.sha256()
    for name in rules_files(folder):
        content = folder.joinpath(name).read_bytes().replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        digest.update(f"{name}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()[:DIGEST_LENGTH]
