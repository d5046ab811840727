"""The report's figures, as compact PNG bytes (matplotlib's object API, any backend)."""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from privet.audits.formatting import format_epsilon
from privet.errors import InvalidParameterError

__all__ = [
    "compact_png",
    "figure_epsilon_vs_trials",
    "figure_learner_zoo",
    "figure_roc",
    "figure_zoo",
    "panel_title",
    "roc_figure",
]


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


def panel_title(text: str, width: int = 46) -> str:
    """A panel title wrapped on word boundaries (never cut) to fit a panel's width."""
    lines = textwrap.wrap(text, width=width, break_on_hyphens=False, break_long_words=False)
    return "\n".join(lines) or text


def _dp_bound(fpr: np.ndarray, eps: float, delta: float) -> np.ndarray:
    """Largest TPR an (eps, delta)-DP algorithm allows at each FPR (Kairouz et al. 2015)."""
    a = np.exp(eps) * fpr + delta
    b = 1.0 - np.exp(-eps) * (1.0 - delta - fpr)
    return np.clip(np.minimum(a, b), 0.0, 1.0)


def _pct(x: float) -> str:
    return f"{100 * x:g}%"


def roc_figure(results: Mapping[str, Any], *, title: str | None = None) -> Any:
    """The ROC figure of membership-inference results (a matplotlib ``Figure``).

    ``results`` maps a label to an MIA result (attacks with ``fpr``, ``tpr``,
    ``metrics``; ``proven_epsilon``, ``proven_delta``, ``fpr_targets``).
    """
    from matplotlib.figure import Figure

    res = dict(results)
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
    return fig


def figure_roc(mias: Mapping[str, Any], *, title: str | None = None) -> bytes:
    """ROC curves of every attack (log-log), one panel per MIA result, as PNG bytes.

    Drawn by :func:`roc_figure` (with the DP bound of each
    model's proven epsilon); panel titles are wrapped, not cut.
    """
    wrapped = {panel_title(k): v for k, v in mias.items()}
    fig = roc_figure(wrapped, title=None if title is None else panel_title(title, 90))
    return _png(fig, dpi=120)


def _curves(a: Any) -> list[tuple[str, Sequence[tuple[int, float]]]]:
    out = [(f"{t.pair} (predictions)", t.curve) for t in a.tests if t.curve]
    out += [(f"{t.pair} (releases)", t.curve) for t in a.release_tests if t.curve]
    return out


def figure_epsilon_vs_trials(learners: Sequence[Any]) -> bytes:
    """Epsilon lower bound against trainings per dataset, one panel per learner (PNG).

    Each test's curve is the bound on growing prefixes of its trainings (each
    point at the test's confidence on its own); the claimed epsilon is dashed,
    the proven one solid (absent when infinite). Panels are titled with the
    learner's short name (the full title is in the table above the figure).
    """
    from matplotlib.figure import Figure

    shown = [a for a in learners if _curves(a)]
    if not shown:
        raise InvalidParameterError("No learner audit with a test curve to plot.")
    k = len(shown)
    ncols = min(3, k)
    nrows = math.ceil(k / ncols)
    fig = Figure(figsize=(4.4 * ncols, 3.5 * nrows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, a in zip(axes, shown, strict=False):
        top = 0.0
        for label, curve in _curves(a):
            n, e = zip(*curve, strict=True)
            e = [min(v, 50.0) for v in e]
            ax.plot(n, e, marker="o", ms=3, lw=1.3, label=label)
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
        ax.set_title(panel_title(f"{a.learner} (depth {a.max_depth})"), fontsize=9)
        ax.grid(True, lw=0.3, alpha=0.5)
        ax.legend(fontsize=7, loc="upper left")
    for ax in axes[k:]:
        ax.set_visible(False)
    return _png(fig)


def figure_zoo(zoo: Sequence[Any]) -> bytes:
    """Claimed epsilon vs the lower bounds of the broken and correct mechanisms (PNG)."""
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


def figure_learner_zoo(zoo: Sequence[Any]) -> bytes:
    """The proven epsilon vs the white-box bounds of each planted bug and its twin (PNG)."""
    from matplotlib.figure import Figure

    if not zoo:
        raise InvalidParameterError("No learner zoo result to plot.")
    y = np.arange(len(zoo))
    cap = 6.0

    def bound(a: Any) -> float:
        m = None if a is None else a.measured_epsilon
        return np.nan if m is None else min(float(m), cap)

    fig = Figure(figsize=(7.5, 0.42 * len(zoo) + 1.2), layout="constrained")
    ax = fig.subplots()
    ax.barh(
        y - 0.2,
        [bound(r.broken) for r in zoo],
        height=0.38,
        color="tab:red",
        label=f"planted bug: ε lower bound (cut at {cap:g})",
    )
    ax.barh(
        y + 0.2,
        [bound(r.correct) for r in zoo],
        height=0.38,
        color="tab:green",
        label="correct twin: ε lower bound",
    )
    ax.scatter(
        [r.broken.proven_epsilon for r in zoo],
        y,
        marker="|",
        s=300,
        color="k",
        label="proven ε (what it charged)",
    )
    ax.set_yticks(y, [r.name for r in zoo], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("epsilon")
    fig.legend(fontsize=7, loc="outside upper center", ncols=2)
    ax.grid(True, axis="x", lw=0.3, alpha=0.5)
    return _png(fig)
