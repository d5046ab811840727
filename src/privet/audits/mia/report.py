"""Reports of membership-inference results: log-log ROC plots (and the markdown tables).

:func:`markdown_table` and :func:`format_epsilon` live in
:mod:`~privet.audits.mia.results` and are re-exported here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from privet.audits.mia.results import MIAResult, _as_mapping, format_epsilon, markdown_table
from privet.audits.report.figures import roc_figure

__all__ = ["format_epsilon", "markdown_table", "plot_roc"]


def plot_roc(
    results: MIAResult | Mapping[str, MIAResult] | Sequence[MIAResult],
    path: str | os.PathLike[str],
    *,
    title: str | None = None,
    dpi: int = 120,
) -> str:
    """ROC curves of every attack on log-log axes, one panel per result; saved to ``path``.

    Each panel shows the attacks' full ROC curves (log-log, as Carlini et al.
    2022 recommend, so the low-FPR regime is visible), the chance diagonal,
    dotted guides at the target FPRs, and — for a model with a finite proven
    epsilon — the largest TPR that ``(epsilon, delta)``-DP allows,
    ``min(e^eps FPR + delta, 1 - e^-eps (1 - delta - FPR))``: a curve above it
    would contradict the ledger. Drawn by
    :func:`privet.audits.report.figures.roc_figure`. Returns the path written.
    """
    fig = roc_figure(_as_mapping(results), title=title)
    path = os.fspath(path)
    fig.savefig(path, dpi=dpi)
    return path
