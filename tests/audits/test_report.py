"""Audit reports: one self-contained HTML file (with real PNGs), markdown and JSON."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from privet.audits.learner_audit import learner_mia
from privet.audits.report import (
    compact_png,
    figure_epsilon_vs_trials,
    figure_zoo,
    ledger_html,
    ledger_text,
    markdown_report,
    write_report,
)
from privet.audits.zoo import run_zoo
from privet.errors import InvalidParameterError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class _Collector(HTMLParser):
    """Collects tags and attributes; HTMLParser raises on nothing, so we check structure."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.images: list[str] = []
        self.links: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if tag == "img":
            self.images.append(a.get("src", ""))
        for key in ("href", "src"):
            if key in a and tag != "img":
                self.links.append(a[key])
        if tag not in {"img", "meta", "br"}:
            self.open.append(tag)

    def handle_endtag(self, tag):
        if self.open and self.open[-1] == tag:
            self.open.pop()


@pytest.fixture(scope="module")
def results(car, exact_id3_audit):
    zoo = run_zoo(["laplace_half_scale", "naive_float_laplace"], confidence=0.95, trials=1000)
    mia = learner_mia(
        "dp_id3",
        car,
        epsilon=1.0,
        max_depth=2,
        confidence=0.95,
        n_shadows=2,
        rows=120,
        attacks=("loss", "lira_offline"),
    )
    return zoo, [exact_id3_audit], {"dp_id3 on car": mia}


@pytest.fixture(scope="module")
def files(results, tmp_path_factory):
    zoo, learners, mias = results
    out = tmp_path_factory.mktemp("report")
    return write_report(out, title="unit report", zoo=zoo, learners=learners, mias=mias)


def test_html_is_self_contained_and_well_formed(files):
    text = files.html.read_text(encoding="utf-8")
    parser = _Collector()
    parser.feed(text)
    parser.close()
    assert parser.tags[0] == "html" and not parser.open  # every element closed
    assert not parser.links  # no external file, script or stylesheet
    assert "<script" not in text
    # zoo bars, epsilon vs trials, ROC curves
    assert len(parser.images) == 3
    for src in parser.images:
        assert src.startswith("data:image/png;base64,")
        png = base64.b64decode(src.split(",", 1)[1])
        assert png.startswith(PNG_MAGIC) and len(png) > 5_000


def test_html_shows_claimed_proven_and_measured_and_the_ledger(files):
    text = files.html.read_text(encoding="utf-8")
    assert "claimed ε" in text and "proven ε" in text and "measured ε" in text
    assert 'class="fail"' in text and 'class="pass"' in text
    assert '<pre class="ledger">' in text and "exact argmax (hidden)" in text
    assert "Membership inference" in text and "lira_offline" in text


def test_markdown_and_json_records(files, results):
    md = files.markdown.read_text(encoding="utf-8")
    assert md.startswith("# unit report")
    assert "| entry | claimed ε |" in md and "| learner | claimed ε | proven ε | measured ε |" in md
    assert "naive_float_laplace" in md and "∞" in md
    record = json.loads(files.json.read_text(encoding="utf-8"))
    assert [z["entry"] for z in record["zoo"]] == ["laplace_half_scale", "naive_float_laplace"]
    (learner,) = record["learners"]
    assert learner["claimed_epsilon"] == 1.0 and learner["proven_epsilon"] == "inf"
    assert learner["tests"][0]["curve"] and "dp_id3 on car" in record["mia"]
    assert record["privet_version"]


def test_figures_are_png_and_validate_input(results):
    zoo, learners, _ = results
    assert figure_zoo(zoo).startswith(PNG_MAGIC)
    assert figure_epsilon_vs_trials(learners).startswith(PNG_MAGIC)
    with pytest.raises(InvalidParameterError):
        figure_zoo([])
    with pytest.raises(InvalidParameterError, match="Nothing to report"):
        write_report("unused")


def test_report_figures_are_palette_pngs_that_look_the_same():
    """A report embeds figures as 256-colour PNGs: much smaller, the same picture."""
    import io

    import numpy as np
    from matplotlib.figure import Figure
    from PIL import Image

    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    x = np.linspace(1e-3, 1, 400)
    for k in range(6):  # several coloured curves, anti-aliased, with a legend
        ax.loglog(x, x ** (1 / (k + 1)), label=f"attack {k}")
    ax.legend()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    rgba = buf.getvalue()
    small = compact_png(rgba)
    assert small.startswith(PNG_MAGIC)
    assert len(small) < 0.6 * len(rgba)
    with Image.open(io.BytesIO(rgba)) as a, Image.open(io.BytesIO(small)) as b:
        assert b.mode == "P" and b.size == a.size
        before = np.asarray(a.convert("RGB"), dtype=float)
        after = np.asarray(b.convert("RGB"), dtype=float)
    diff = np.abs(before - after)
    assert diff.mean() < 1.0  # of 255: no visible change ...
    assert np.quantile(diff, 0.99) < 16  # ... and no pixel but a few edge ones moved far


def test_ledger_renders_as_html_and_text(results):
    _, (audit,), _ = results
    assert "NonPrivate" not in ledger_text(audit.ledger)  # rendered, not repr'd
    assert "ε=∞" in ledger_text(audit.ledger)
    assert ledger_html(audit.ledger).startswith('<pre class="ledger">')


def test_markdown_without_learners_has_only_the_zoo(results):
    zoo, _, _ = results
    md = markdown_report(title="z", zoo=zoo)
    assert "## Mechanism bug zoo" in md and "## Learners" not in md


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_html_renders_in_a_headless_browser(files, tmp_path):
    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--window-size=1200,1600",
            f"--screenshot={shot}",
            files.html.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert shot.read_bytes().startswith(PNG_MAGIC)


# ------------------------------------------------------------------ readability
# (issue 33, item 9: what a user tripped on in the audit's outputs)


def test_the_mia_table_names_each_model_once(files):
    """The model's long name heads its attacks instead of repeating on every row."""
    md = files.markdown.read_text(encoding="utf-8")
    mia = md[md.index("## Membership inference") :]
    rows = [line for line in mia.splitlines() if line.startswith("| ") and "attack" not in line]
    assert len(rows) == 2  # loss and lira_offline
    assert sum("dp_id3 on car" in r for r in rows) == 1
    html = files.html.read_text(encoding="utf-8")
    assert html.count('<tr class="group"><td colspan="5">dp_id3 on car') == 1


def test_an_infinite_implied_epsilon_is_explained():
    from types import SimpleNamespace

    from privet.audits.report import mia_table

    attack = SimpleNamespace(
        attack="loss",
        auc=SimpleNamespace(interval=(0.4, 0.6)),
        metrics=SimpleNamespace(auc=0.5),
        operating_point=lambda f: SimpleNamespace(tpr=0.02, tpr_interval=(0.01, 0.04)),
        implied_at=lambda f: SimpleNamespace(estimate=float("inf")),
        heldout_at=lambda f: SimpleNamespace(epsilon_lower=0.0),
    )
    result = SimpleNamespace(proven_epsilon=1.0000000008467396, attacks=[attack])
    t = mia_table({"a model": result})
    (row,) = t.rows
    assert [c.text for c in row.cells][3:] == ["∞*", "0"]
    assert row.group == "a model (proven ε 1)"  # rounded as everywhere else
    (note,) = t.notes
    assert "divides by zero" in note and "held-out lower bound" in note


def test_figure_titles_wrap_instead_of_being_cut():
    from privet.audits.report.figures import panel_title

    title = "ObliviousID3Classifier(split='exact') (paper-faithful ODP+FMPC-ID3) on car"
    wrapped = panel_title(title)
    assert wrapped.replace("\n", " ") == title and "…" not in wrapped
    assert max(len(line) for line in wrapped.splitlines()) <= 46 or " " not in title


def test_the_terminal_learner_table_fits_80_columns(results):
    import io

    from rich.console import Console

    from privet.audits.cli_audit import _learner_table

    _, learners, _ = results
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(_learner_table(learners))
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    row = next(line for line in lines if learners[0].learner in line)
    assert "FAIL" in row  # the verdict on the learner's own line, nothing wrapped away


def test_the_mia_summary_line_rounds_like_the_reports():
    from types import SimpleNamespace

    from privet.cli.audit import mia_summary

    line = mia_summary(
        SimpleNamespace(claimed_epsilon=None, proven_epsilon=1.0000000008467396, epsilon_lower=0.0)
    )
    assert "claimed none, proven 1)" in line and "None" not in line and "0000000008" not in line
