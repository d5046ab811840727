"""Reports of membership-inference results: log-log ROC plots (and the markdown tables).

:func:`markdown_table` and :func:`format_epsilon` live in
:mod:`~privet.audits.mia.results` and are re-exported here.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence

import numpy as np

from privet.audits.mia.results import MIAResult, _as_mapping, _pct, format_epsilon, markdown_table

__all__ = ["format_epsilon", "markdown_table", "plot_roc"]


def _dp_bound(fpr: np.ndarray, eps: float, delta: float) -> np.ndarray:
    """Largest TPR an (eps, delta)-DP algorithm allows at each FPR (Kairouz et al. 2015)."""
    a = np.exp(eps) * fpr + delta
    b = 1.0 - np.exp(-eps) * (1.0 - delta - fpr)
    return np.clip(np.minimum(a, b), 0.0, 1.0)


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
    would contradict the ledger. Uses matplotlib's object API (no pyplot state,
    any backend). Returns the path written.
    """
    from matplotlib.figure import Figure

    res = _as_mapping(results)
    k = len(res)
    ncols = 1 if k == 1 else 2
    nrows = math.ceil(k / ncols)
    fig = Figure(figsize=(5.2 * ncols, 4.6 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax, (label, r) in zip(axes, res.items(), strict=False):
        n_neg = max(min(a.metrics.n_nonmembers for a in r.attacks), 1)
        n_pos = max(min(a.metrics.n_members for a in r.attacks), 1)
        lo_x, lo_y = 0.5 / n_neg, 0.5 / n_pos
        grid = np.logspace(math.log10(lo_x), 0, 200)
        ax.plot(grid, grid, color="0.6", lw=0.8, ls="--", label="chance")
        if math.isfinite(r.proven_epsilon):
            ax.plot(
                grid,
                np.maximum(_dp_bound(grid, r.proven_epsilon, r.proven_delta), lo_y),
                color="k",
                lw=1.0,
                ls=":",
                label=f"DP bound, proven ε={format_epsilon(r.proven_epsilon)}",
            )
        for a in r.attacks:
            x = np.maximum(a.fpr, lo_x)
            y = np.maximum(a.tpr, lo_y)
            tpr1 = a.metrics.operating_points[-1] if a.metrics.operating_points else None
            extra = f", TPR@{_pct(tpr1.target_fpr)}={tpr1.tpr:.3f}" if tpr1 is not None else ""
            ax.plot(x, y, lw=1.3, label=f"{a.attack} (AUC {a.metrics.auc:.3f}{extra})")
        for f in r.fpr_targets:
            ax.axvline(f, color="0.85", lw=0.6, ls=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo_x, 1.0)
        ax.set_ylim(lo_y, 1.05)
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        ax.set_title(f"{label} (proven ε = {format_epsilon(r.proven_epsilon)})", fontsize=10)
        ax.legend(fontsize=7, loc="lower right")
        ax.grid(True, which="major", lw=0.3, alpha=0.5)
    for ax in axes[k:]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title)
    path = os.fspath(path)
    fig.savefig(path, dpi=dpi)
    return path
