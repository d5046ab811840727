"""Audit reports: one self-contained HTML file, a markdown summary and a JSON record.

:func:`write_report` takes any mix of mechanism-zoo results
(:func:`~privet.audits.zoo.run_zoo`), learner-zoo results
(:func:`~privet.audits.zoo.run_learner_zoo`), learner audits
(:func:`~privet.audits.learners.audit_learner`) and membership-inference results
(:func:`~privet.audits.mia.membership_inference`) and writes

* ``<name>.html`` — rendered from a Jinja2 template (``templates/report.html.j2``):
  tables, the plots as base64 PNG (ROC curves on log-log axes, epsilon lower
  bound against the number of trainings, the zoos' bounds) and every learner's
  ledger (rich's HTML export), with no external file, script or font;
* ``<name>.md`` — the same tables in markdown;
* ``<name>.json`` — everything as data (``inf`` as the string ``"inf"``).

The tables are built once (:mod:`~privet.audits.report.tables`) and rendered by
each format. Each learner's row puts the three numbers of DESIGN.md's "Privacy
truth" side by side: the *claimed* epsilon, the *proven* one (the ledger) and
the *measured* lower bound (with its confidence), next to the estimate. A
report built from an audit on private rows is marked internal.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privet.audits.report.figures import (
    compact_png,
    figure_epsilon_vs_trials,
    figure_learner_zoo,
    figure_roc,
    figure_zoo,
)
from privet.audits.report.html import html_report
from privet.audits.report.markdown import markdown_report, markdown_table
from privet.audits.report.record import report_record
from privet.audits.report.tables import (
    learner_table,
    ledger_html,
    ledger_text,
    mia_table,
    zoo_rows,
)
from privet.errors import InvalidParameterError

__all__ = [
    "ReportFiles",
    "compact_png",
    "figure_epsilon_vs_trials",
    "figure_learner_zoo",
    "figure_roc",
    "figure_zoo",
    "html_report",
    "learner_table",
    "ledger_html",
    "ledger_text",
    "markdown_report",
    "markdown_table",
    "mia_table",
    "report_record",
    "write_report",
    "zoo_rows",
]


@dataclass(frozen=True, slots=True)
class ReportFiles:
    """Paths of the files :func:`write_report` wrote."""

    html: Path
    markdown: Path
    json: Path

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter((self.html, self.markdown, self.json))


def write_report(
    out_dir: str | os.PathLike[str],
    *,
    title: str = "privet audit",
    name: str = "audit",
    zoo: Sequence[Any] = (),
    learners: Sequence[Any] = (),
    mias: Mapping[str, Any] | None = None,
    learner_zoo: Sequence[Any] = (),
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
        Mechanism bug-zoo results.
    learners : sequence of LearnerAudit
    mias : mapping label -> MIAResult, optional
        Membership-inference results not attached to a learner audit.
    learner_zoo : sequence of LearnerZooResult
    notes : str
        A paragraph placed under the title.

    Returns
    -------
    ReportFiles
    """
    if not (zoo or learners or mias or learner_zoo):
        raise InvalidParameterError(
            "Nothing to report: pass zoo=..., learner_zoo=..., learners=... or mias=... results."
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    common = {
        "title": title,
        "zoo": zoo,
        "learners": learners,
        "mias": mias,
        "learner_zoo": learner_zoo,
        "notes": notes,
    }
    files = ReportFiles(out / f"{name}.html", out / f"{name}.md", out / f"{name}.json")
    files.html.write_text(html_report(**common), encoding="utf-8")
    files.markdown.write_text(markdown_report(**common), encoding="utf-8")
    files.json.write_text(json.dumps(report_record(**common), indent=2), encoding="utf-8")
    return files
