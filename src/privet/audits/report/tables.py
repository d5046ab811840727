"""The report's tables, as data: one builder per table, shared by HTML, markdown and terminal.

A :class:`Table` is a header and rows of :class:`Cell` (text and a style
class: ``pass``, ``fail``, ``noclaim``). Rows may belong to a *group* (the MIA
table groups its attacks under each model), which the HTML template shows as
one heading row and markdown as the group's name in its first row only, so a
long model name is never repeated on every line.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from privet.audits.formatting import format_epsilon
from privet.errors import InvalidParameterError

__all__ = [
    "Cell",
    "Table",
    "learner_table",
    "learner_zoo_table",
    "ledger_html",
    "ledger_text",
    "mia_table",
    "verdict_class",
    "zoo_rows",
    "zoo_table",
]

IMPLIED_NOTE = (
    "∞*: no non-member scored at or above the attack's threshold for this FPR, so the plug-in "
    "ratio TPR/FPR divides by zero. With a few hundred non-members that certifies nothing; the "
    "held-out lower bound (next column) is the figure that holds at the stated confidence, "
    "and 0 there means the attack did no better than chance on the held-out half."
)


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    css: str = ""


@dataclass(frozen=True, slots=True)
class Row:
    cells: list[Cell]
    group: str | None = None


@dataclass(frozen=True)
class Table:
    head: list[str]
    rows: list[Row]
    notes: list[str] = field(default_factory=list)

    def plain(self) -> list[list[str]]:
        return [[c.text for c in r.cells] for r in self.rows]


def verdict_class(text: str) -> str:
    if text in ("FAIL", "NO (privet bug)", "NO"):
        return "fail"
    if text in ("PASS", "yes"):
        return "pass"
    if text in ("NO CLAIM", "NOT MEASURED"):
        return "noclaim"
    return ""


def _c(text: str) -> Cell:
    return Cell(text, verdict_class(text))


def _num(x: float | None, digits: int = 3) -> str:
    return format_epsilon(x, digits)


# ------------------------------------------------------------------------ zoos


def zoo_rows(zoo: Sequence[Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the mechanism zoo's table (markdown, HTML and the command line)."""
    t = zoo_table(zoo)
    return t.head, t.plain()


def zoo_table(zoo: Sequence[Any]) -> Table:
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
            Row(
                [
                    Cell(r.entry.name),
                    Cell(_num(r.entry.claimed_epsilon)),
                    Cell(_num(r.entry.true_epsilon)),
                    Cell(f"{r.broken.epsilon_lower:.3f}"),
                    _c(r.broken.verdict),
                    Cell("—" if c is None else f"{c.epsilon_lower:.3f}"),
                    _c("—" if c is None else c.verdict),
                    Cell(f"{r.broken.n_trials:,}"),
                ]
            )
        )
    return Table(head, rows)


def learner_zoo_table(zoo: Sequence[Any]) -> Table:
    head = [
        "entry",
        "planted bug",
        "proven ε",
        "bug: ε ≥",
        "caught",
        "twin: ε ≥",
        "twin passes",
        "trainings/side",
    ]
    rows = []
    for r in zoo:
        b, c = r.broken, r.correct
        best = b.best_release_test
        rows.append(
            Row(
                [
                    Cell(r.name),
                    Cell(r.entry.bug),
                    Cell(_num(b.proven_epsilon)),
                    Cell(_num(b.measured_epsilon)),
                    _c("yes" if r.caught else "NO"),
                    Cell("—" if c is None else _num(c.measured_epsilon)),
                    _c("—" if c is None else ("yes" if r.correct_passed else "NO")),
                    Cell("—" if best is None else f"{best.n_trials:,}"),
                ]
            )
        )
    return Table(head, rows)


# -------------------------------------------------------------------- learners


def _measured(a: Any) -> str:
    m = a.measured_epsilon
    if m is None:
        return "not measured"
    return f"≥ {m:.3g} ({a.confidence:.0%})"


def _estimate(a: Any) -> str:
    best = a.best_release_test
    if best is None:
        return "—"
    lo, hi = best.estimate_interval
    return f"{_num(best.estimate)} [{_num(lo)}, {_num(hi)}]"


def learner_table(learners: Sequence[Any]) -> Table:
    """Claimed | proven | measured | estimate per learner (short names; titles in sections)."""
    head = [
        "learner",
        "claimed ε",
        "proven ε",
        "measured ε",
        "estimate [95%]",
        "one-run ε",
        "MIA ε",
        "verdict",
        "measured ≤ proven",
    ]
    rows = []
    for a in learners:
        proven = _num(a.proven_epsilon)
        if a.proven_delta:
            proven += f" (δ {a.proven_delta:.0e})"
        rows.append(
            Row(
                [
                    Cell(f"{a.learner} (depth {a.max_depth}, {a.mode})"),
                    Cell(_num(a.claimed_epsilon)),
                    Cell(proven),
                    Cell(_measured(a)),
                    Cell(_estimate(a)),
                    Cell("—" if a.one_run is None else f"≥ {a.one_run.epsilon_lower:.3g}"),
                    Cell("—" if a.mia is None else f"≥ {a.mia.epsilon_lower:.3g}"),
                    _c(a.verdict),
                    _c("yes" if a.consistent else "NO (privet bug)"),
                ]
            )
        )
    return Table(head, rows)


def learner_details(a: Any) -> list[str]:
    """One line per test of a learner audit (pair, event, counts, bound)."""
    out = []
    for t in a.release_tests:
        if not t.measured:
            out.append(f"{t.pair} (releases): not measured: {t.not_measured}")
            continue
        r = t.result
        lo, hi = t.estimate_interval
        out.append(
            f"{t.pair} (releases): {t.pair_description}; event {r.event} more likely on "
            f"{r.more_likely_on}; D {r.k_d0}/{r.n_d0}, D' {r.k_d1}/{r.n_d1}; ε ≥ "
            f"{r.epsilon_lower:.4g} at {r.confidence:.2%}; estimate {_num(t.estimate, 4)} "
            f"[{_num(lo, 4)}, {_num(hi, 4)}] ({t.estimate_method}); the pair allows "
            f"{_num(t.pair_epsilon, 4)}; {t.n_trials:,} trainings per side, "
            f"{t.cpu_seconds:.0f} CPU s"
        )
    for t in a.tests:
        r = t.result
        out.append(
            f"{t.pair} (predictions): {t.pair_description}; event {r.event} more likely on "
            f"{r.more_likely_on}; D {r.k_d0}/{r.n_d0}, D' {r.k_d1}/{r.n_d1}; ε ≥ "
            f"{r.epsilon_lower:.4g} at {r.confidence:.2%}"
        )
    if a.one_run is not None:
        o = a.one_run
        out.append(
            f"one run (Steinke, Nasr & Jagielski 2023): {o.n_correct} of {o.n_guesses} guesses "
            f"correct among m = {o.m} canaries: ε ≥ {o.epsilon_lower:.4g} at {o.confidence:.0%}"
        )
    return out


# ------------------------------------------------------------------------- MIA


def mia_table(mias: Mapping[str, Any], target_fpr: float = 0.01) -> Table:
    """The attacks of each model, grouped under the model (its name shown once)."""
    tag = f"{100 * target_fpr:g}%"
    head = [
        "attack",
        "AUC [CI]",
        f"TPR@{tag} [CI]",
        f"implied ε @{tag}",
        f"held-out ε lower @{tag}",
    ]
    rows: list[Row] = []
    notes: list[str] = []
    for label, r in mias.items():
        group = f"{label} (proven ε {_num(r.proven_epsilon)})"
        for a in r.attacks:
            lo, hi = a.auc.interval
            try:
                op = a.operating_point(target_fpr)
                tpr = f"{op.tpr:.4f} [{op.tpr_interval[0]:.4f}, {op.tpr_interval[1]:.4f}]"
                implied = a.implied_at(target_fpr).estimate
                imp = _num(implied)
                if implied is not None and math.isinf(implied):
                    imp = "∞*"
                    if IMPLIED_NOTE not in notes:
                        notes.append(IMPLIED_NOTE)
            except InvalidParameterError:
                tpr = imp = "—"
            try:
                held = _num(a.heldout_at(target_fpr).epsilon_lower)
            except InvalidParameterError:
                held = "—"
            rows.append(
                Row(
                    [
                        Cell(a.attack),
                        Cell(f"{a.metrics.auc:.3f} [{lo:.3f}, {hi:.3f}]"),
                        Cell(tpr),
                        Cell(imp),
                        Cell(held),
                    ],
                    group=group,
                )
            )
    return Table(head, rows, notes)


# ---------------------------------------------------------------------- ledger


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
