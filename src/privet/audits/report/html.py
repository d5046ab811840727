"""The self-contained HTML report, rendered from ``templates/report.html.j2`` (Jinja2)."""

from __future__ import annotations

import base64
import datetime as _dt
from collections.abc import Mapping, Sequence
from typing import Any

from privet.audits.report.figures import (
    figure_epsilon_vs_trials,
    figure_learner_zoo,
    figure_roc,
    figure_zoo,
)
from privet.audits.report.tables import (
    learner_details,
    learner_table,
    learner_zoo_table,
    ledger_html,
    mia_table,
    zoo_table,
)

__all__ = ["html_report"]


def _environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("privet.audits.report", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "j2"), default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        lstrip_blocks=False,
    )


def _b64(png: bytes) -> str:
    return base64.b64encode(png).decode("ascii")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("privet")
    except PackageNotFoundError:  # pragma: no cover - source checkout without install
        return "unknown"


def html_report(
    *,
    title: str = "privet audit",
    zoo: Sequence[Any] = (),
    learners: Sequence[Any] = (),
    mias: Mapping[str, Any] | None = None,
    learner_zoo: Sequence[Any] = (),
    notes: str = "",
) -> str:
    """The self-contained HTML report: tables, figures as base64 PNG, ledgers."""
    all_mias = {f"{a.learner} on {a.dataset}": a.mia for a in learners if a.mia is not None}
    all_mias.update(mias or {})
    curves = any(t.curve for a in learners for t in (*a.tests, *a.release_tests))
    context = {
        "title": title,
        "version": _version(),
        "stamp": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "notes": notes,
        "internal": any(getattr(a, "internal", False) for a in learners),
        "zoo": zoo_table(zoo) if zoo else None,
        "zoo_confidence": f"{zoo[0].broken.confidence:.1%}" if zoo else "",
        "zoo_figure": _b64(figure_zoo(zoo)) if zoo else "",
        "zoo_entries": [
            {
                "name": r.entry.name,
                "bug": r.entry.bug,
                "reference": r.entry.reference,
                "event": r.broken.event,
            }
            for r in zoo
        ],
        "learner_zoo": learner_zoo_table(learner_zoo) if learner_zoo else None,
        "learner_zoo_figure": _b64(figure_learner_zoo(learner_zoo)) if learner_zoo else "",
        "learners": learner_table(learners) if learners else None,
        "curve_figure": _b64(figure_epsilon_vs_trials(learners)) if curves else "",
        "learner_sections": [
            {
                "title": a.title,
                "dataset": a.dataset,
                "summary": a.summary(),
                "details": learner_details(a),
                "ledger": ledger_html(a.ledger) if a.ledger is not None else "",
            }
            for a in learners
        ],
        "mias": mia_table(all_mias) if all_mias else None,
        "roc_figure": _b64(figure_roc(all_mias)) if all_mias else "",
    }
    return _environment().get_template("report.html.j2").render(**context)  # type: ignore[no-any-return]
