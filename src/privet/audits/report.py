"""Audit reports: one self-contained HTML file, a markdown summary and a JSON record.

:func:`write_report` takes any mix of bug-zoo results
(:func:`~privet.audits.zoo.run_zoo`), learner audits
(:func:`~privet.audits.learner_audit.audit_learner`) and membership-inference
results (:func:`~privet.audits.mia.membership_inference`) and writes

* ``<name>.html`` — tables, the plots as base64 PNG (ROC curves on log-log
  axes, epsilon lower bound against the number of trainings, the zoo's claimed
  vs measured epsilon) and every learner's ledger (rich's HTML export), with
  no external file, script or font;
* ``<name>.md`` — the same tables in markdown;
* ``<name>.json`` — everything as data (``inf`` as the string ``"inf"``).

Each learner's row puts the three numbers of DESIGN.md's "Privacy truth" side
by side: the *claimed* epsilon (the paper), the *proven* one (the ledger) and
the *measured* lower bound (the audit, with its confidence).
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from privet.audits.formatting import finite, format_epsilon
from privet.errors import InvalidParameterError

__all__ = [
    "ReportFiles",
    "figure_epsilon_vs_trials",
    "figure_roc",
    "figure_zoo",
    "html_report",
    "ledger_html",
    "ledger_text",
    "markdown_report",
    "report_record",
    "write_report",
]


@dataclass(frozen=True, slots=True)
class ReportFiles:
    """Paths of the files :func:`write_report` wrote."""

    html: Path
    markdown: Path
    json: Path

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter((self.html, self.markdown, self.json))


# ---------------------------------------------------------------------- figures


def _png(fig: Any, dpi: int = 110) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return compact_png(buf.getvalue())


def compact_png(data: bytes) -> bytes:
    """The same picture as a 256-colour PNG, for embedding in a report.

    Matplotlib writes 32-bit RGBA; line plots on white use far fewer colours,
    so a palette keeps them as they look at a third of the size (the learner
    audit's two figures fell from 1.15 MB to 0.40 MB).
    """
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        palette = image.convert("RGB").quantize(colors=256)
    buf = io.BytesIO()
    palette.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def figure_roc(mias: Mapping[str, Any], *, title: str | None = None) -> bytes:
    """ROC curves of every attack (log-log), one panel per MIA result, as PNG bytes.

    Drawn by :func:`privet.audits.mia.plot_roc` (with the DP bound of each
    model's proven epsilon).
    """
    from privet.audits.mia import plot_roc

    with tempfile.TemporaryDirectory(prefix="privet-report-") as tmp:
        path = os.path.join(tmp, "roc.png")
        plot_roc(dict(mias), path, title=title)
        return compact_png(Path(path).read_bytes())


def figure_epsilon_vs_trials(learners: Sequence[Any]) -> bytes:
    """Epsilon lower bound against trainings per dataset, one panel per learner (PNG).

    Each test's curve is the bound on growing prefixes of its trainings (each
    point at the test's confidence on its own); the claimed epsilon is dashed,
    the proven one solid (absent when infinite).
    """
    from matplotlib.figure import Figure

    shown = [a for a in learners if any(t.curve for t in a.tests)]
    if not shown:
        raise InvalidParameterError("No learner audit with a test curve to plot.")
    k = len(shown)
    ncols = min(3, k)
    nrows = math.ceil(k / ncols)
    fig = Figure(figsize=(4.4 * ncols, 3.4 * nrows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, a in zip(axes, shown, strict=False):
        top = 0.0
        for t in a.tests:
            if not t.curve:
                continue
            n, e = zip(*t.curve, strict=True)
            ax.plot(n, e, marker="o", ms=3, lw=1.3, label=f"{t.pair}")
            top = max(top, *e)
        if a.claimed_epsilon is not None and math.isfinite(a.claimed_epsilon):
            ax.axhline(a.claimed_epsilon, color="tab:red", ls="--", lw=1, label="claimed ε")
            top = max(top, a.claimed_epsilon)
        if math.isfinite(a.proven_epsilon):
            ax.axhline(a.proven_epsilon, color="k", lw=1, label="proven ε")
            top = max(top, a.proven_epsilon)
        ax.set_xscale("log")
        ax.set_ylim(0, 1.15 * top + 0.1)
        ax.set_xlabel("trainings per dataset")
        ax.set_ylabel("ε lower bound")
        ax.set_title(_short(a.title), fontsize=9)
        ax.grid(True, lw=0.3, alpha=0.5)
        ax.legend(fontsize=7, loc="upper left")
    for ax in axes[k:]:
        ax.set_visible(False)
    return _png(fig)


def figure_zoo(zoo: Sequence[Any]) -> bytes:
    """Claimed epsilon vs the lower bounds of the broken and correct versions (PNG)."""
    from matplotlib.figure import Figure

    if not zoo:
        raise InvalidParameterError("No zoo result to plot.")
    names = [r.entry.name for r in zoo]
    y = np.arange(len(zoo))
    fig = Figure(figsize=(7.5, 0.42 * len(zoo) + 1.2), layout="constrained")
    ax = fig.subplots()
    broken = [r.broken.epsilon_lower for r in zoo]
    correct = [r.correct.epsilon_lower if r.correct is not None else np.nan for r in zoo]
    ax.barh(y - 0.2, broken, height=0.38, color="tab:red", label="broken: ε lower bound")
    ax.barh(y + 0.2, correct, height=0.38, color="tab:green", label="correct: ε lower bound")
    ax.scatter(
        [r.entry.claimed_epsilon for r in zoo], y, marker="|", s=300, color="k", label="claimed ε"
    )
    ax.set_yticks(y, names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("epsilon")
    fig.legend(fontsize=7, loc="outside upper center", ncols=3)
    ax.grid(True, axis="x", lw=0.3, alpha=0.5)
    return _png(fig)


def _short(title: str, width: int = 48) -> str:
    return title if len(title) <= width else title[: width - 1] + "…"


def ledger_html(
    ledger: Any, *, width: int = 110, max_parts: int = 2, max_depth: int | None = 4
) -> str:
    """The ledger's rich tree as an HTML ``<pre>`` block with inline styles.

    ``max_parts`` costliest parts of each partition and ``max_depth`` nested
    scopes are shown (:meth:`privet.ledger.Ledger.report`).
    """
    from rich.console import Console

    console = Console(record=True, width=width, file=io.StringIO(), color_system="truecolor")
    console.print(ledger.report(max_parts=max_parts, max_depth=max_depth))
    return console.export_html(
        inline_styles=True,
        code_format='<pre class="ledger">{code}</pre>',
    )


def ledger_text(
    ledger: Any, *, width: int = 110, max_parts: int = 2, max_depth: int | None = 4
) -> str:
    """The ledger's rich tree as plain text (same cuts as :func:`ledger_html`)."""
    from rich.console import Console

    console = Console(record=True, width=width, file=io.StringIO(), color_system=None)
    console.print(ledger.report(max_parts=max_parts, max_depth=max_depth))
    return console.export_text()


# ------------------------------------------------------------------------ tables


def zoo_rows(zoo: Sequence[Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the bug-zoo table (markdown, HTML and the command line)."""
    head = [
        "entry",
        "claimed ε",
        "true ε (broken)",
        "broken: ε lower",
        "verdict",
        "correct: ε lower",
        "verdict",
        "trials/input",
    ]
    rows = []
    for r in zoo:
        c = r.correct
        rows.append(
            [
                r.entry.name,
                format_epsilon(r.entry.claimed_epsilon),
                format_epsilon(r.entry.true_epsilon),
                f"{r.broken.epsilon_lower:.3f}",
                r.broken.verdict,
                "—" if c is None else f"{c.epsilon_lower:.3f}",
                "—" if c is None else c.verdict,
                f"{r.broken.n_trials:,}",
            ]
        )
    return head, rows


def _learner_rows(learners: Sequence[Any]) -> tuple[list[str], list[list[str]]]:
    head = [
        "learner",
        "dataset",
        "claimed ε",
        "proven ε",
        "measured ε (many trainings)",
        "one-run ε",
        "MIA ε",
        "verdict vs claim",
        "measured ≤ proven",
    ]
    rows = []
    for a in learners:
        tests = ", ".join(
            f"{t.pair} {t.epsilon_lower:.3g} ({t.result.n_trials:,})" for t in a.tests
        )
        rows.append(
            [
                a.title,
                a.dataset,
                format_epsilon(a.claimed_epsilon),
                format_epsilon(a.proven_epsilon),
                f"≥ {a.measured_epsilon:.3g} at {a.confidence:.0%} [{tests}]",
                "—" if a.one_run is None else f"≥ {a.one_run.epsilon_lower:.3g}",
                "—" if a.mia is None else f"≥ {a.mia.epsilon_lower:.3g}",
                a.verdict,
                "yes" if a.consistent else "NO (privet bug)",
            ]
        )
    return head, rows


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    def cell(s: str) -> str:
        return s.replace("|", "\\|")

    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    def td(c: str) -> str:
        cls = {"FAIL": "fail", "PASS": "pass", "NO CLAIM": "noclaim"}.get(c, "")
        if c.startswith("NO ("):
            cls = "fail"
        return f'<td class="{cls}">{html.escape(c)}</td>' if cls else f"<td>{html.escape(c)}</td>"

    out = ["<table>", "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    out += ["<tr>" + "".join(td(c) for c in r) + "</tr>" for r in rows]
    out.append("</table>")
    return "\n".join(out)


def _mias_of(learners: Sequence[Any], mias: Mapping[str, Any] | None) -> dict[str, Any]:
    out = {f"{a.learner} on {a.dataset}": a.mia for a in learners if a.mia is not None}
    out.update(mias or {})
    return out


def _mia_rows(
    mias: Mapping[str, Any], target_fpr: float = 0.01
) -> tuple[list[str], list[list[str]]]:
    tag = f"{100 * target_fpr:g}%"
    head = [
        "model",
        "proven ε",
        "attack",
        "AUC [CI]",
        f"TPR@{tag} [CI]",
        f"implied ε @{tag}",
        f"held-out ε lower @{tag}",
    ]
    rows = []
    for label, r in mias.items():
        for a in r.attacks:
            lo, hi = a.auc.interval
            try:
                op = a.operating_point(target_fpr)
                tpr = f"{op.tpr:.4f} [{op.tpr_interval[0]:.4f}, {op.tpr_interval[1]:.4f}]"
                imp = format_epsilon(a.implied_at(target_fpr).estimate)
            except InvalidParameterError:
                tpr = imp = "—"
            try:
                held = format_epsilon(a.heldout_at(target_fpr).epsilon_lower)
            except InvalidParameterError:
                held = "—"
            rows.append(
                [
                    label,
                    format_epsilon(r.proven_epsilon),
                    a.attack,
                    f"{a.metrics.auc:.3f} [{lo:.3f}, {hi:.3f}]",
                    tpr,
                    imp,
                    held,
                ]
            )
    return head, rows


# -------------------------------------------------------------------- markdown


def markdown_report(
    *,
    title: str = "privet audit",
    zoo: Sequence[Any] = (),
    learners: Sequence[Any] = (),
    mias: Mapping[str, Any] | None = None,
    notes: str = "",
) -> str:
    """The markdown summary: zoo, learners (claimed | proven | measured), MIA tables."""
    parts = [f"# {title}", ""]
    if notes:
        parts += [notes, ""]
    if zoo:
        conf = zoo[0].broken.confidence
        parts += [
            "## Bug zoo",
            "",
            f"Every broken mechanism is tested against its claim at {conf:.1%} confidence; "
            "FAIL means the lower bound refutes the claim. The correct counterpart must PASS.",
            "",
            _md_table(*zoo_rows(zoo)),
            "",
        ]
    if learners:
        parts += [
            "## Learners: claimed, proven and measured epsilon",
            "",
            "Claimed: the paper's guarantee. Proven: what privet's ledger computes from the "
            "mechanisms that ran (∞: a release with no DP guarantee). Measured: the empirical "
            "lower bound (many trainings on neighbouring datasets; one run with canaries; "
            "membership inference).",
            "",
            _md_table(*_learner_rows(learners)),
            "",
        ]
        for a in learners:
            parts.append(f"- **{a.title}** on {a.dataset}: {a.summary()}")
            for t in a.tests:
                r = t.result
                parts.append(
                    f"  - {t.pair}: {t.pair_description}; event `{r.event}` more likely on "
                    f"{r.more_likely_on}, counts D {r.k_d0}/{r.n_d0}, D' {r.k_d1}/{r.n_d1}"
                )
        parts.append("")
    all_mias = _mias_of(learners, mias)
    if all_mias:
        from privet.audits.mia import markdown_table

        parts += ["## Membership inference", "", markdown_table(all_mias), ""]
    return "\n".join(parts)


# ------------------------------------------------------------------------ JSON


def report_record(
    *,
    title: str = "privet audit",
    zoo: Sequence[Any] = (),
    learners: Sequence[Any] = (),
    mias: Mapping[str, Any] | None = None,
    notes: str = "",
) -> dict[str, Any]:
    """Everything as JSON-ready data."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        privet_version = version("privet")
    except PackageNotFoundError:  # pragma: no cover - source checkout without install
        privet_version = "unknown"
    return finite(
        {
            "title": title,
            "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "privet_version": privet_version,
            "notes": notes,
            "zoo": [r.to_dict() for r in zoo],
            "learners": [a.to_dict() for a in learners],
            "mia": {k: v.to_dict() for k, v in (mias or {}).items()},
        }
    )


# ------------------------------------------------------------------------ HTML

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1200px; color: #222; line-height: 1.4; padding: 0 1em; }
h1 { border-bottom: 2px solid #444; padding-bottom: .2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #bbb; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.88em; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.fail { color: #b00; font-weight: bold; }
td.pass { color: #070; font-weight: bold; }
td.noclaim { color: #a60; }
img { max-width: 100%; border: 1px solid #ddd; margin: .5em 0; }
pre.ledger { font-size: 0.78em; background: #fafafa; border: 1px solid #ddd; padding: .8em;
             overflow-x: auto; line-height: 1.25; }
.note { color: #555; font-size: 0.9em; }
details { margin: .6em 0; }
"""


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def html_report(
    *,
    title: str = "privet audit",
    zoo: Sequence[Any] = (),
    learners: Sequence[Any] = (),
    mias: Mapping[str, Any] | None = None,
    notes: str = "",
) -> str:
    """The self-contained HTML report (see the module docstring)."""
    body = [f"<h1>{html.escape(title)}</h1>"]
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    body.append(f'<p class="note">Generated by privet on {stamp}.</p>')
    if notes:
        body.append(f"<p>{html.escape(notes)}</p>")
    if zoo:
        conf = zoo[0].broken.confidence
        body += [
            "<h2>Bug zoo</h2>",
            f'<p class="note">Each broken mechanism is tested against the epsilon it claims, at '
            f"{conf:.1%} confidence; FAIL means the lower bound refutes the claim. The correct "
            "counterpart must PASS.</p>",
            _html_table(*zoo_rows(zoo)),
            _img(figure_zoo(zoo), "claimed vs measured epsilon of the bug zoo"),
            "<details><summary>What each entry gets wrong</summary><ul>",
        ]
        body += [
            f"<li><b>{html.escape(r.entry.name)}</b>: {html.escape(r.entry.bug)} "
            f"<i>({html.escape(r.entry.reference)})</i>; event: "
            f"<code>{html.escape(r.broken.event)}</code></li>"
            for r in zoo
        ]
        body.append("</ul></details>")
    if learners:
        body += [
            "<h2>Learners: claimed, proven and measured epsilon</h2>",
            '<p class="note">Claimed: the paper. Proven: privet\'s ledger (∞: a release with no '
            "DP guarantee). Measured: empirical lower bounds with their confidence. A measured "
            "bound above the proven epsilon would be a bug in privet.</p>",
            _html_table(*_learner_rows(learners)),
        ]
        if any(t.curve for a in learners for t in a.tests):
            body += [
                "<h3>Epsilon lower bound against the number of trainings</h3>",
                _img(figure_epsilon_vs_trials(learners), "epsilon lower bound vs trials"),
            ]
        for a in learners:
            body.append(f"<h3>{html.escape(a.title)} on {html.escape(a.dataset)}</h3>")
            body.append(f"<p>{html.escape(a.summary())}</p><ul>")
            for t in a.tests:
                r = t.result
                body.append(
                    f"<li><b>{html.escape(t.pair)}</b>: {html.escape(t.pair_description)}; event "
                    f"<code>{html.escape(r.event)}</code> (more likely on {r.more_likely_on}); "
                    f"D {r.k_d0}/{r.n_d0}, D' {r.k_d1}/{r.n_d1}; ε ≥ {r.epsilon_lower:.4g} at "
                    f"{r.confidence:.2%}</li>"
                )
            if a.one_run is not None:
                o = a.one_run
                body.append(
                    f"<li><b>one run</b> (Steinke, Nasr &amp; Jagielski 2023): {o.n_correct} of "
                    f"{o.n_guesses} guesses correct among m = {o.m} canaries: ε ≥ "
                    f"{o.epsilon_lower:.4g} at {o.confidence:.0%}</li>"
                )
            body.append("</ul>")
            if a.ledger is not None:
                body.append("<details><summary>Ledger of one fit</summary>")
                body.append(ledger_html(a.ledger))
                body.append("</details>")
    all_mias = _mias_of(learners, mias)
    if all_mias:
        body += [
            "<h2>Membership inference</h2>",
            '<p class="note">Loss, shadow-model, LiRA and RMIA attacks; ROC curves on log-log '
            "axes with the largest TPR the proven epsilon allows (dotted). The held-out "
            "epsilon lower bound chooses the threshold on half of the scores and counts the "
            "other half.</p>",
            _img(figure_roc(all_mias), "ROC curves on log-log axes"),
            _html_table(*_mia_rows(all_mias)),
        ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def write_report(
    out_dir: str | os.PathLike[str],
    *,
    title: str = "privet audit",
    name: str = "audit",
    zoo: Sequence[Any] = (),
    learners: Sequence[Any] = (),
    mias: Mapping[str, Any] | None = None,
    notes: str = "",
) -> ReportFiles:
    """Write ``<name>.html``, ``<name>.md`` and ``<name>.json`` into ``out_dir``.

    Parameters
    ----------
    out_dir : path
        Created if missing.
    title, name : str
        Report title and file stem.
    zoo : sequence of ZooResult
    learners : sequence of LearnerAudit
    mias : mapping label -> MIAResult, optional
        Membership-inference results not attached to a learner audit.
    notes : str
        A paragraph placed under the title.

    Returns
    -------
    ReportFiles
    """
    if not (zoo or learners or mias):
        raise InvalidParameterError(
            "Nothing to report: pass zoo=..., learners=... or mias=... results."
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    common = {"title": title, "zoo": zoo, "learners": learners, "mias": mias, "notes": notes}
    files = ReportFiles(out / f"{name}.html", out / f"{name}.md", out / f"{name}.json")
    files.html.write_text(html_report(**common), encoding="utf-8")
    files.markdown.write_text(markdown_report(**common), encoding="utf-8")
    files.json.write_text(json.dumps(report_record(**common), indent=2), encoding="utf-8")
    return files
