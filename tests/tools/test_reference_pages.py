"""The reference pages under docs/reference/ are generated from the code (``python -m
doclens.tools.reference``) and committed; these tests fail when a committed page is not what the
generator writes today, e.g. after an option was added, removed or reworded without regenerating."""

import argparse

from doclens.cli import build_parser
from doclens.tools import reference
from tests.conftest import REPO


def test_the_committed_reference_pages_are_current():
    stale = reference.stale(REPO)
    assert stale == [], f"docs/reference/ is not current ({', '.join(stale)}): run python -m doclens.tools.reference"


def test_a_changed_parser_makes_the_pages_stale():
    """The check can fail: one option more on ``doclens score`` makes options.md differ."""
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    commands["score"].add_argument("--brand-new-option", help="an option the committed page does not list")
    assert reference.stale(REPO, parser) == ["options.md"]
    assert "`--brand-new-option BRAND_NEW_OPTION`" in reference.options_page(parser)


def test_every_command_and_settings_field_has_a_row():
    page = (REPO / reference.FOLDER / "options.md").read_text(encoding="utf-8")
    for name in ("score", "report", "leaderboard", "compare", "agreement", "validate", "baselines", "judge-check",
                 "judge-fit", "presets", "install-metric"):
        assert f"## `doclens {name}`" in page, name
    for cls in reference.SETTINGS:
        for field in cls.names():
            assert f"| `{field}` |" in page, (cls.__name__, field)


def test_the_check_command_names_a_stale_page(tmp_path, capsys):
    assert reference.main(["--root", str(tmp_path)]) == 0
    assert reference.main(["--check", "--root", str(tmp_path)]) == 0
    (tmp_path / reference.FOLDER / "exit-codes.md").write_text("# Exit codes\n", encoding="utf-8")
    assert reference.main(["--check", "--root", str(tmp_path)]) == 1
    assert "exit-codes.md is not current" in capsys.readouterr().err
