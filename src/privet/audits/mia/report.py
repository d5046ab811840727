"""Reports of membership-inference results: markdown tables and log-log ROC plots."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from privet.errors import InvalidParameterError

if TYPE_CHECKING:
    from privet.audits.mia.experiment import MIAResult

__all__ = ["format_epsilon", "markdown_table", "plot_roc"]


def format_epsilon(x: float | None, digits: int = 3) -> str:
    """``∞`` for infinity, ``—`` for None, else ``digits`` significant digits."""
    if x is None:
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if math.isnan(x):
        return "nan"
    return f"{x:.{digits}g}"


def _as_mapping(results: object) -> dict[str, MIAResult]:
    from privet.audits.mia.experiment import MIAResult

    if isinstance(results, MIAResult):
        return {results.model: results}
    if isinstance(results, Mapping):
        out = dict(results)
    elif isinstance(results, Sequence):
        out = {}
        for i, r in enumerate(results):
            key = r.model if r.model not in out else f"{r.model} ({i})"
            out[key] = r
    else:
        raise InvalidParameterError(
            "Pass an MIAResult, a mapping label -> MIAResult, or a sequence of them; got "
            f"{type(results).__name__}."
        )
    if not out or not all(isinstance(r, MIAResult) for r in out.values()):
        raise InvalidParameterError("Expected at least one MIAResult.")
    return out


def _pct(x: float) -> str:
    return f"{100 * x:g}%"


def markdown_table(
    results: MIAResult | Mapping[str, MIAResult] | Sequence[MIAResult],
    *,
    target_fpr: float = 0.01,
    header: bool = True,
) -> str:
    """One markdown table over several results: a row per (model, attack).

    Columns: the proven epsilon of the ledger (and the claim, when it differs),
    ROC AUC with its DeLong interval, best balanced accuracy, TPR at each target
    FPR with its Clopper–Pearson interval, the epsilon implied at
    ``target_fpr`` (estimate and [lower, upper]; lower is the conservative
    Clopper–Pearson bound) and the held-out lower bound (threshold chosen on
    other targets).
    """
    res = _as_mapping(results)
    first = next(iter(res.values()))
    conf = _pct(first.confidence)
    fprs = first.fpr_targets
    tag = _pct(target_fpr)
    cols = ["model", "proven ε", "attack", f"AUC [{conf} CI]", "bal. acc."]
    cols += [f"TPR@{_pct(f)} [CI]" for f in fprs]
    cols += [f"implied ε @{tag}: est. [lower, upper]", f"held-out ε lower @{tag}"]
    lines = []
    if header:
        for label, r in res.items():
            claim = (
                f", claimed ε = {format_epsilon(r.claimed_epsilon)}"
                if r.claimed_epsilon is not None
                and not math.isclose(r.claimed_epsilon, r.proven_epsilon)
                else ""
            )
            lines.append(
                f"- **{label}**: proven ε = {format_epsilon(r.proven_epsilon)}"
                f" (δ = {r.proven_delta:g}){claim}; {r.n_shadows} shadow models, "
                f"{r.n_targets} target(s) × {r.n_candidates} candidates, "
                f"{r.n_population} population samples; empirical ε lower (held-out, best "
                f"attack) = {format_epsilon(r.epsilon_lower)}; target accuracy "
                f"{r.train_accuracy:.3f} (members) / {r.test_accuracy:.3f} (non-members)"
                + (
                    f"; **held-out bound exceeds the proven ε: {', '.join(r.exceeds_proven)}**"
                    if r.exceeds_proven
                    else ""
                )
            )
        lines.append("")
    lines.append("| " + " | ".join(cols) + " |")
    lines.append("|" + "|".join("---" for _ in cols) + "|")
    for label, r in res.items():
        for a in r.attacks:
            m = a.metrics
            lo, hi = a.auc.interval
            cells = [
                label,
                format_epsilon(r.proven_epsilon),
                a.attack,
                f"{m.auc:.3f} [{lo:.3f}, {hi:.3f}]",
                f"{m.balanced_accuracy:.3f}",
            ]
            for f in fprs:
                op = a.operating_point(f)
                cells.append(f"{op.tpr:.4f} [{op.tpr_interval[0]:.4f}, {op.tpr_interval[1]:.4f}]")
            try:
                imp = a.implied_at(target_fpr)
                cells.append(
                    f"{format_epsilon(imp.estimate)} [{format_epsilon(imp.lower)}, "
                    f"{format_epsilon(imp.upper)}]"
                )
            except InvalidParameterError:
                cells.append("—")
            try:
                cells.append(format_epsilon(a.heldout_at(target_fpr).epsilon_lower))
            except InvalidParameterError:
                cells.append("—")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


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
