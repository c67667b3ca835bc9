"""Pictures (issue 30): Report.plot, leaderboard_figure, doclens agreement --plot, and the plots of
the report and leaderboard pages opened in headless Chromium, their marks read back into numbers."""

import io
import json
import re

import pytest

pytest.importorskip("matplotlib", reason="the plots need the plots extra (matplotlib)")

from doclens import DocLens, Report  # noqa: E402
from doclens.cli import main  # noqa: E402
from doclens.evaluators.rules.overlap import OverlapEvaluator  # noqa: E402
from doclens.views.leaderboard import load_entry, rank_group  # noqa: E402
from doclens.views.plots import leaderboard_figure, pairwise_differences  # noqa: E402
from tests.conftest import REPO  # noqa: E402
from tests.views.test_leaderboard import chromium_binary  # noqa: E402

NOTES = [json.loads(line) for line in (REPO / "examples" / "notes.jsonl").read_text().splitlines()]
#: a rendered mark read back into a number (×100): SVG coordinates carry 6 significant digits
TOLERANCE = 0.05


def note_rows(copies=6, keep_lines=None):
    """``copies`` × the two example visits (ids ``visit-001-0`` …), their predictions cut to the
    first ``keep_lines`` lines when given (a weaker system)."""
    rows = []
    for k in range(copies):
        for row in NOTES:
            prediction = row["prediction"]
            if keep_lines is not None:
                prediction = "\n".join(prediction.splitlines()[:keep_lines + k % 3])
            rows.append(dict(row, id=f"{row['id']}-{k}", prediction=prediction))
    return rows


def score(rows, system=None) -> Report:
    report = DocLens(OverlapEvaluator()).score(rows, progress=False)
    if system:
        report.config["system"] = system
    return report


def run(argv, capsys):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---- notebooks: matplotlib figures ------------------------------------------------------------
def test_report_plot_returns_figures_whose_marks_are_the_reports_numbers():
    report = score(note_rows(copies=1))
    figure = report.plot(kind="sections")
    sections = list(report.sections)
    for panel, metric in enumerate(("claim_recall", "claim_precision")):
        for x, section in enumerate(sections):
            bar = next(p for p in figure.axes[panel].patches if p.get_gid() == f"bar-{panel}-0-{x}")
            assert bar.get_height() == pytest.approx(100 * report.sections[section][metric])
    figure = report.plot(kind="distribution")
    dots = figure.axes[0].collections[0]
    assert [x for x, _ in dots.get_offsets()] == pytest.approx([100 * r.scores["claim_recall"]
                                                                for r in report.instances])
    figure = report.plot(kind="verdicts")
    widths = {p.get_gid(): p.get_width() for p in figure.axes[0].patches}
    counts = report.counts["claim_recall"]
    assert widths["verdict-0-supported"] == counts["hits"]
    assert widths["verdict-0-not_supported"] == counts["items"] - counts["hits"]
    with pytest.raises(ValueError, match="unknown plot kind 'pie'"):
        report.plot(kind="pie")


def test_many_instances_make_a_histogram_whose_bins_count_them(monkeypatch):
    import doclens.reports.plots as report_plots

    report = score(note_rows())
    monkeypatch.setattr(report_plots, "MAX_DOTS", 5)
    figure = report.plot(kind="distribution", metrics=["claim_recall"])
    assert not figure.axes[0].collections
    bins = {p.get_gid(): p.get_height() for p in figure.axes[0].patches}
    tallest = max(bins.values())
    assert tallest == pytest.approx(0.8)
    expected = {}
    for result in report.instances:
        b = min(49, int(100 * result.scores["claim_recall"] // 2))
        expected[f"hist-0-{b}"] = expected.get(f"hist-0-{b}", 0) + 1
    most = max(expected.values())
    assert bins == pytest.approx({k: 0.8 * v / most for k, v in expected.items()})


def test_leaderboard_figure_takes_scores_files_and_refuses_mixed_signatures(tmp_path):
    strong, weak = tmp_path / "strong.json", tmp_path / "weak.json"
    score(note_rows(), "strong").save(strong)
    score(note_rows(keep_lines=6), "weak").save(weak)
    forest = leaderboard_figure([strong, weak], kind="forest", metric="claim_recall", n_resamples=200)
    entries = rank_group([load_entry(str(p), 200) for p in (strong, weak)], "claim_recall", 200)
    for i, entry in enumerate(entries):
        point = next(line for line in forest.axes[0].lines if line.get_gid() == f"point-{i}")
        assert point.get_xdata()[0] == pytest.approx(100 * entry.intervals["claim_recall"].point)
    assert len(leaderboard_figure([strong, weak], kind="sections", n_resamples=200).axes) == 2
    assert leaderboard_figure([strong, weak], kind="pairwise", n_resamples=200).axes
    other = tmp_path / "other.json"
    report = score(note_rows(), "other")
    report.signature += "|extra:1"
    report.save(other)
    with pytest.raises(ValueError, match="2 different signatures; they are never plotted together"):
        leaderboard_figure([strong, other], n_resamples=200)


def test_pairwise_matrix_agrees_with_the_vs_leader_column(tmp_path):
    paths = []
    for name, lines in (("full", None), ("half", 6), ("short", 3)):
        paths.append(tmp_path / f"{name}.json")
        score(note_rows(keep_lines=lines), name).save(paths[-1])
    entries = rank_group([load_entry(str(p), 300) for p in paths], "claim_recall", 300)
    matrix = pairwise_differences(entries, "claim_recall", 300)
    for r, entry in enumerate(entries[1:], start=1):
        cell = matrix[r][0]
        assert (cell.delta, cell.low, cell.high) == (entry.versus_leader.delta, entry.versus_leader.low,
                                                     entry.versus_leader.high)
        assert matrix[0][r].delta == pytest.approx(-cell.delta)
    assert all(matrix[i][i] is None for i in range(3))


# ---- the pages in Chromium --------------------------------------------------------------------
def open_page(page, tmp_path, height):
    """``(dom, console lines with an error, screenshot path)`` of ``page`` in headless Chromium."""
    import subprocess

    binary = chromium_binary()
    if binary is None:
        pytest.skip("headless Chromium is not installed (Debian package 'chromium'; .ci/run installs it)")
    flags = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'chromium-profile'}", "--enable-logging=stderr", "--v=0",
             "--virtual-time-budget=3000"]
    dom = subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    errors = [line for line in dom.stderr.splitlines() if "CONSOLE" in line or "Refused" in line]
    shot = tmp_path / f"{page.stem}.png"
    taken = subprocess.run([*flags, f"--screenshot={shot}", f"--window-size=1200,{height}", page.as_uri()],
                           capture_output=True, text=True, timeout=120)
    assert taken.returncode == 0 and shot.is_file(), taken.stderr[-2000:]
    return dom.stdout, errors, shot


def figure_axes(dom, ident):
    """The ``data-axes`` of the ``<figure id=ident>``."""
    match = re.search(f'<figure class="plot" id="{ident}" data-plot="[a-z]+" data-axes="([^"]+)"', dom)
    assert match, f"no figure {ident}"
    return json.loads(match.group(1).replace("&quot;", '"'))


def group(dom, ident):
    """The markup of SVG group ``ident`` up to its first closing ``</g>`` (one mark)."""
    start = dom.index(f'id="{ident}"')
    return dom[start: dom.index("</g>", start)]


def path_points(markup):
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", re.search(r' d="([^"]+)"', markup).group(1))]
    return list(zip(numbers[::2], numbers[1::2]))


def x_value(axes, px):
    (left, _, right, _), (x0, x1) = axes["box"], axes["xlim"]
    return x0 + (px - left) / (right - left) * (x1 - x0)


def y_value(axes, py):
    (_, top, _, bottom), (y0, y1) = axes["box"], axes["ylim"]
    return y0 + (bottom - py) / (bottom - top) * (y1 - y0)


def colour_pixels(shot, rgb, within=12):
    from PIL import Image

    image = Image.open(shot).convert("RGB")
    return sum(count for count, colour in image.getcolors(1 << 24)
               if all(abs(a - b) <= within for a, b in zip(colour, rgb)))


def page_checks(dom, errors):
    assert errors == [], errors  # a style the policy blocked would be logged here
    svgs = re.findall(r"<svg[^>]*>", dom)
    assert svgs and all('role="img"' in s and "aria-labelledby" in s for s in svgs)
    assert not re.search(r"<svg[\s\S]*?\sstyle=", dom.split("<svg", 1)[1])  # presentation attributes only
    assert "http://" not in dom and "https://" not in dom


def test_report_page_plots_render_and_their_marks_are_the_numbers(tmp_path, capsys):
    rows = note_rows()
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    scores = tmp_path / "scores.json"
    report = score(rows)
    report.save(scores)
    page = tmp_path / "report.html"
    code, _, err = run(["report", str(scores), "--input", str(inputs), "-o", str(page), "--resamples", "50"], capsys)
    assert code == 0, err
    dom, errors, shot = open_page(page, tmp_path, 2400)
    page_checks(dom, errors)
    assert [kind for kind in re.findall(r'data-plot="([a-z]+)"', dom)] == ["sections", "distribution", "verdicts"]
    axes = figure_axes(dom, "report-sections")
    for panel, metric in enumerate(("claim_recall", "claim_precision")):
        for x, section in enumerate(report.sections):
            ys = [y for _, y in path_points(group(dom, f"report-sections-bar-{panel}-0-{x}"))]
            height = y_value(axes[panel], min(ys)) - y_value(axes[panel], max(ys))
            assert height == pytest.approx(100 * report.sections[section][metric], abs=TOLERANCE)
    axes = figure_axes(dom, "report-distribution")[0]
    start = dom.index('id="report-distribution-dots-0"')
    dots = dom[start: dom.index('id="report-distribution-dots-1"')]
    links = re.findall(r'<a href="#inst-(\d+)">\s*<g[^>]*>\s*<use [^>]*?x="([-\d.]+)"', dots)
    assert len(links) == len(report.instances)
    for position, px in links:
        assert x_value(axes, float(px)) == pytest.approx(100 * report.instances[int(position)].scores["claim_recall"],
                                                         abs=TOLERANCE)
        assert f'id="inst-{position}"' in dom
    axes = figure_axes(dom, "report-verdicts")[0]
    xs = [x for x, _ in path_points(group(dom, "report-verdicts-verdict-0-supported"))]
    assert x_value(axes, max(xs)) - x_value(axes, min(xs)) == pytest.approx(report.counts["claim_recall"]["hits"],
                                                                            abs=TOLERANCE * 10)
    assert "<title" in dom and "the numbers of this plot" in dom
    assert colour_pixels(shot, (0x00, 0x72, 0xB2)) > 500  # claim recall's bars and dots, drawn in colour


def test_leaderboard_page_has_forest_sections_and_matrix_per_signature(tmp_path, capsys):
    paths = []
    for name, lines in (("full", None), ("half", 6), ("short", 3)):
        paths.append(tmp_path / f"{name}.json")
        score(note_rows(keep_lines=lines), name).save(paths[-1])
    other = tmp_path / "other.json"
    report = score(note_rows(), "other-judge")
    report.signature += "|extra:1"
    report.save(other)
    board = tmp_path / "board.html"
    code, _, err = run(["leaderboard", *map(str, paths), str(other), "-o", str(board), "--resamples", "200",
                        "--rank-by", "claim_recall"], capsys)
    assert code == 0, err
    dom, errors, shot = open_page(board, tmp_path, 3200)
    page_checks(dom, errors)
    assert re.findall(r'<figure class="plot" id="([a-z0-9-]+)"', dom) == [
        "board1-forest", "board1-sections", "board1-pairwise", "board2-forest", "board2-sections"]
    entries = rank_group([load_entry(str(p), 200) for p in paths], "claim_recall", 200)
    axes = figure_axes(dom, "board1-forest")[0]
    for i, entry in enumerate(entries):
        interval = entry.intervals["claim_recall"]
        x = float(re.search(r'<use [^>]*?x="([-\d.]+)"', group(dom, f"board1-forest-point-{i}")).group(1))
        assert x_value(axes, x) == pytest.approx(100 * interval.point, abs=TOLERANCE)
        ends = sorted(x for x, _ in path_points(group(dom, f"board1-forest-interval-{i}")))
        assert [x_value(axes, ends[0]), x_value(axes, ends[-1])] == pytest.approx(
            [100 * interval.low, 100 * interval.high], abs=TOLERANCE)
    assert 'id="board1-forest-leader-band"' in dom
    matrix = pairwise_differences(entries, "claim_recall", 200)
    for r in range(3):
        for c in range(3):
            if r != c:
                mark = "*" if matrix[r][c].distinguishable else ""
                assert f"<td>{100 * matrix[r][c].delta:+.2f}{mark}</td>" in dom  # the matrix's numbers table
    assert any(matrix[r][c].distinguishable for r in range(3) for c in range(3) if r != c)
    assert colour_pixels(shot, (0x00, 0x72, 0xB2)) > 500


def test_pages_without_matplotlib_keep_their_tables(tmp_path, capsys, monkeypatch):
    import doclens.views.plots as plots

    monkeypatch.setattr(plots, "plots_available", lambda: False)
    scores = tmp_path / "scores.json"
    score(note_rows(copies=1)).save(scores)
    page = tmp_path / "report.html"
    assert run(["report", str(scores), "-o", str(page), "--resamples", "0"], capsys)[0] == 0
    html = page.read_text()
    assert "pip install &#x27;doclens[plots]&#x27;" in html or "doclens[plots]" in html
    assert "<svg" not in html and "<table>" in html
    assert run(["report", str(scores), "-o", str(page), "--resamples", "0", "--no-plots"], capsys)[0] == 0
    assert "doclens[plots]" not in page.read_text()


# ---- agreement ------------------------------------------------------------------------------
def test_agreement_plot_draws_each_instance_against_the_human_score(tmp_path, capsys):
    from doclens.stats.agreement import kendall_tau_b, spearman_rho
    from doclens.views.plots import agreement_figure

    report = score(note_rows(keep_lines=4))
    scores = tmp_path / "scores.json"
    report.save(scores)
    human = {r.id: float(i % 5) for i, r in enumerate(report.instances)}
    csv_path = tmp_path / "human.csv"
    csv_path.write_text("id,completeness\n" + "".join(f"{k},{v}\n" for k, v in human.items()))
    out = tmp_path / "agreement.svg"
    code, _, err = run(["agreement", str(scores), str(csv_path), "--human-column", "completeness",
                        "--metric", "claim_recall", "--plot", str(out)], capsys)
    assert code == 0 and "agreement plot written" in err
    svg = out.read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    pairs = [(human[r.id], r.scores["claim_recall"]) for r in report.instances]
    xs, ys = [h for h, _ in pairs], [d for _, d in pairs]
    result = {"spearman_rho": spearman_rho(ys, xs), "kendall_tau_b": kendall_tau_b(ys, xs), "n": len(pairs)}
    figure = agreement_figure({"claim_recall": pairs}, [result], "completeness")
    offsets = figure.axes[0].collections[0].get_offsets()
    assert [v for p in offsets for v in p] == pytest.approx([v for h, d in pairs for v in (h, 100 * d)])
    assert f"ρ={result['spearman_rho']:.3f}" in figure.axes[0].get_title() and f"n={len(pairs)}" in \
        figure.axes[0].get_title()
    prefs = tmp_path / "prefs.csv"
    prefs.write_text("id,system_a,system_b,preferred\n")
    code, _, err = run(["agreement", f"a={scores}", f"b={scores}", str(prefs), "--plot", str(out)], capsys)
    assert code == 2 and "--plot draws per-instance scores" in err


def test_leaderboard_plot_option_writes_one_signatures_picture(tmp_path, capsys):
    strong, weak, other = tmp_path / "strong.json", tmp_path / "weak.json", tmp_path / "other.json"
    score(note_rows(), "strong").save(strong)
    score(note_rows(keep_lines=6), "weak").save(weak)
    report = score(note_rows(), "other")
    report.signature += "|extra:1"
    report.save(other)
    out = tmp_path / "forest.svg"
    code, stdout, err = run(["leaderboard", str(strong), str(weak), "--plot", str(out), "--resamples", "100"], capsys)
    assert code == 0, err
    assert "forest plot written" in stdout and out.read_text().count("<svg") == 1
    first = out.read_text()
    run(["leaderboard", str(strong), str(weak), "--plot", str(out), "--resamples", "100"], capsys)
    assert out.read_text() == first  # no date, no random ids: the same scores draw the same file
    code, _, err = run(["leaderboard", str(strong), str(other), "--plot", str(out)], capsys)
    assert code == 2 and "never plotted together" in err


def test_hostile_system_names_are_drawn_as_written_and_escaped(tmp_path, capsys):
    names = [r"$\frac{$ bad formula", "<script>document.title='pwned'</script>", "_hidden"]
    paths = []
    for i, name in enumerate(names):
        paths.append(tmp_path / f"s{i}.json")
        score(note_rows(keep_lines=None if i == 0 else 4 + i), name).save(paths[-1])
    legend = leaderboard_figure(paths, kind="sections", n_resamples=50).legends[0]
    assert sorted(t.get_text().lstrip("\u200b") for t in legend.get_texts()) == sorted(
        n.replace("$", r"\$") for n in names)  # all three shown (in rank order), none read as mathematics
    board = tmp_path / "board.html"
    code, _, err = run(["leaderboard", *map(str, paths), "-o", str(board), "--resamples", "50"], capsys)
    assert code == 0, err
    html = board.read_text()
    assert "<script>document.title" not in html and html.count("<script>") == 1
    dom, errors, _ = open_page(board, tmp_path, 1600)
    page_checks(dom, errors)
    assert "pwned" not in dom.split("</title>")[0]


# ---- text from the input is text, never mathtext (issue 41) -------------------------------------
HOSTILE = r"$\frac{$"


def _with_section(report, name):
    """``report`` with its first note section renamed ``name`` (in the report and every instance)."""
    data = json.loads(json.dumps(report.to_dict()))
    first = next(iter(data["sections"]))
    data["sections"] = {(name if k == first else k): v for k, v in data["sections"].items()}
    for instance in data["instances"]:
        for kind in ("reference_claims", "prediction_claims"):
            for claim in instance[kind]:
                if claim.get("section") == first:
                    claim["section"] = name
    return data


def test_a_section_name_that_looks_like_mathematics_draws_on_every_page(tmp_path, capsys):
    from doclens.reports.plots import section_figure

    figure = section_figure({"report": {HOSTILE: {"claim_recall": 0.5, "claim_precision": 0.5}}})
    figure.savefig(io.BytesIO(), format="svg")  # a formula read from the input would fail here
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == [HOSTILE.replace("$", r"\$")]
    paths = []
    for i, system in enumerate(("strong", "weak")):
        paths.append(tmp_path / f"s{i}.json")
        paths[-1].write_text(json.dumps(_with_section(score(note_rows(keep_lines=None if i == 0 else 5), system),
                                                      HOSTILE)))
    page = tmp_path / "report.html"
    code, _, err = run(["report", str(paths[0]), "-o", str(page), "--resamples", "20"], capsys)
    assert code == 0 and "internal error" not in err, err
    assert "<svg" in page.read_text() and "frac" in page.read_text()
    board = tmp_path / "board.html"
    code, _, err = run(["leaderboard", *map(str, paths), "-o", str(board), "--resamples", "20"], capsys)
    assert code == 0 and "internal error" not in err, err
    assert board.read_text().count("<svg") >= 2


def test_a_human_column_that_looks_like_mathematics_draws_and_the_table_is_printed(tmp_path, capsys):
    report = score(note_rows(keep_lines=4))
    scores = tmp_path / "scores.json"
    report.save(scores)
    column = r"$\frac{human$"
    csv_path = tmp_path / "human.csv"
    csv_path.write_text(f"id,{column}\n" + "".join(f"{r.id},{i % 5}\n" for i, r in enumerate(report.instances)))
    out = tmp_path / "agreement.svg"
    code, stdout, err = run(["agreement", str(scores), str(csv_path), "--human-column", column,
                             "--metric", "claim_recall", "--plot", str(out)], capsys)
    assert code == 0 and "internal error" not in err, err
    assert "claim_recall" in stdout and out.read_text().lstrip().startswith("<?xml")


def test_a_plot_that_fails_leaves_the_page_and_the_table(tmp_path, capsys, monkeypatch):
    import doclens.reports.plots as report_plots
    import doclens.views.plots as plots

    def broken(*args, **kwargs):
        raise ValueError("a figure that cannot be drawn")

    monkeypatch.setattr(plots, "section_figure", broken)
    monkeypatch.setattr(plots, "forest_figure", broken)
    monkeypatch.setattr(plots, "agreement_figure", broken)
    monkeypatch.setattr(report_plots, "section_figure", broken)
    scores = tmp_path / "scores.json"
    report = score(note_rows(keep_lines=4))
    report.save(scores)
    page = tmp_path / "report.html"
    code, _, err = run(["report", str(scores), "-o", str(page), "--resamples", "20"], capsys)
    assert code == 0, err
    html = page.read_text()
    assert "could not be drawn" in html and "<table>" in html
    board = tmp_path / "board.html"
    code, _, err = run(["leaderboard", str(scores), "-o", str(board), "--resamples", "20"], capsys)
    assert code == 0 and "could not be drawn" in board.read_text(), err
    csv_path = tmp_path / "human.csv"
    csv_path.write_text("id,h\n" + "".join(f"{r.id},{i % 5}\n" for i, r in enumerate(report.instances)))
    code, stdout, err = run(["agreement", str(scores), str(csv_path), "--human-column", "h", "--metric",
                             "claim_recall", "--plot", str(tmp_path / "a.svg")], capsys)
    assert "claim_recall" in stdout and "could not be drawn" in err and "internal error" not in err, err


# ---- pages bounded in size (issue 41) ---------------------------------------------------------------
def test_a_200000_character_section_name_makes_a_page_of_normal_size_cut_visibly(tmp_path, capsys):
    name = "HISTORY " + "x" * 200_000
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps(_with_section(score(note_rows(copies=2)), name)))
    page = tmp_path / "report.html"
    code, _, err = run(["report", str(scores), "-o", str(page), "--resamples", "20"], capsys)
    assert code == 0, err
    html = page.read_text()
    assert len(html) < 600_000 and "x" * 200_000 not in html  # 152 MB before
    assert "more characters; the scores file holds the whole text]" in html
    assert json.loads(scores.read_text())["sections"].get(name)  # the JSON keeps it whole


def test_a_100_kb_system_name_makes_a_small_leaderboard_and_a_short_legend(tmp_path, capsys):
    long_name = "system-" + "y" * 100_000
    paths = []
    for i, system in enumerate((long_name, "short")):
        paths.append(tmp_path / f"s{i}.json")
        score(note_rows(keep_lines=None if i == 0 else 5), system).save(paths[-1])
    board = tmp_path / "board.html"
    code, _, err = run(["leaderboard", *map(str, paths), "-o", str(board), "--resamples", "20"], capsys)
    assert code == 0, err
    assert len(board.read_text()) < 400_000  # 37 MB before
    legend = leaderboard_figure(paths, kind="sections", n_resamples=20).legends[0]
    assert max(len(t.get_text()) for t in legend.get_texts()) <= 60


def test_a_page_over_its_size_budget_drops_instances_and_says_so(tmp_path, capsys):
    scores = tmp_path / "scores.json"
    score(note_rows(copies=20)).save(scores)  # 40 instances
    page = tmp_path / "report.html"
    assert run(["report", str(scores), "-o", str(page), "--resamples", "0", "--no-plots"], capsys)[0] == 0
    whole = len(page.read_bytes())
    code, out, err = run(["report", str(scores), "-o", str(page), "--resamples", "0", "--no-plots",
                          "--max-page-mb", str(whole / 4 / 1e6)], capsys)
    assert code == 0, err
    html = page.read_text()
    shown = html.count('<section class="instance"')
    assert 0 < shown < 40 and len(html.encode()) < whole / 2
    assert f"{40 - shown} more instances are not shown" in html and "--max-page-mb" in html
    assert "size budget" in out + err


def test_section_bars_show_their_items_hatch_thin_sections_and_carry_titles():
    """Issue 38 item 4: a section score on 8 claims is drawn with its count and hatched, a score
    on 40 is not; sections under their human names; every figure has a title."""
    from doclens.reports.plots import distribution_figure, section_figure, verdict_figure

    series = {"report": {"subjective": {"claim_recall": 0.75, "claim_recall_items": 8,
                                        "claim_precision": 0.5, "claim_precision_items": 40},
                         "assessment_and_plan": {"claim_recall": 0.5, "claim_recall_items": 40,
                                                 "claim_precision": None}}}
    figure = section_figure(series)
    recall, precision = figure.axes[:2]
    assert [t.get_text() for t in recall.get_xticklabels()] == ["Subjective", "Assessment and plan"]
    thin, thick = (next(p for p in recall.patches if p.get_gid() == f"bar-0-0-{x}") for x in (0, 1))
    assert thin.get_hatch() == "////" and not thick.get_hatch()
    assert {"n=8", "n=40"} <= {t.get_text() for t in recall.texts}
    assert "n/a" in {t.get_text() for t in precision.texts}  # no score: no bar, no count
    assert recall.get_title() and precision.get_title() and "fewer than 20" in figure.get_suptitle()
    assert "fewer than" not in section_figure(series, min_items=5).get_suptitle()  # nothing thin at 5
    assert distribution_figure({"claim_recall": [0.5, 1.0]}).axes[0].get_title()
    assert verdict_figure({"reference claims": {"supported": 3, "not supported": 1}}).axes[0].get_title()
