"""spaCy imported in DocLens's own processes (doclens/core/imports.py): without torch and without
spaCy's command line (issue 49), with the same tokenizer; a library caller's process is left as it is."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("spacy", reason="the clinical-rules judge reads text with spaCy (the [clinical] extra)")

REPO = Path(__file__).resolve().parents[2]
PROBE = """
import sys
from doclens.core import imports
if sys.argv[1] == "lean":
    imports.lean_imports()
spacy = imports.import_spacy()
tokens = [t.text for t in spacy.blank("en").make_doc("Patient denies fever, chills; BP 140/60.")]
from spacy.matcher import Matcher, PhraseMatcher
Matcher(spacy.blank("en").vocab)
cli_free = not any(m in sys.modules for m in ("spacy.cli", "spacy.cli.info", "typer", "weasel"))
import spacy.cli
print(tokens, cli_free, "torch" in sys.modules, hasattr(spacy.cli, "download"), callable(spacy.info))
"""


def _probe(how: str) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE, how], capture_output=True, text=True, cwd=str(REPO),
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_the_command_line_imports_spacy_without_its_command_line_nor_torch():
    tokens = "['Patient', 'denies', 'fever', ',', 'chills', ';', 'BP', '140/60', '.']"
    # lean (the command line): neither typer, weasel nor spacy.cli imported by `import spacy`, no
    # torch; spacy.cli is the real package when imported afterwards, spacy.info still callable
    assert _probe("lean") == f"{tokens} True False True True"
    # a library caller's process: the plain import, spaCy's command line with it
    assert _probe("plain").startswith(f"{tokens} False")
