"""The report's figures, as compact PNG bytes (matplotlib's object API, any backend)."""

from __future__ import annotations

import io
import math
import os
import tempfile
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from privet.errors import InvalidParameterError

__all__ = [
    "compact_png",
    "figure_epsilon_vs_trials",
    "figure_learner_zoo",
    "figure_roc",
    "figure_zoo",
    "panel_title",
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
    return "\n".join(textwrap.wrap(text, width=width)) or text


def figure_roc(mias: Mapping[str, Any], *, title: str | None = None) -> bytes:
    """ROC curves of every attack (log-log), one panel per MIA result, as PNG bytes.

    Drawn by :func:`privet.audits.mia.plot_roc` (with the DP bound of each
    model's proven epsilon); panel titles are wrapped, not cut.
    """
    from privet.audits.mia import plot_roc

    wrapped = {panel_title(k): v for k, v in mias.items()}
    with tempfile.TemporaryDirectory(prefix="privet-report-") as tmp:
        path = os.path.join(tmp, "roc.png")
        plot_roc(wrapped, path, title=None if title is None else panel_title(title, 90))
        return compact_png(Path(path).read_bytes())


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
