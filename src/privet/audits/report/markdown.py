"""The markdown summary of an audit report (the same tables as the HTML)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from privet.audits.report.tables import (
    Table,
    learner_details,
    learner_table,
    learner_zoo_table,
    mia_table,
    zoo_table,
)

__all__ = ["markdown_report", "markdown_table"]


def markdown_table(t: Table) -> str:
    """A :class:`Table` in markdown; a group's name appears in its first row only."""

    def cell(s: str) -> str:
        return s.replace("|", "\\|")

    grouped = any(r.group is not None for r in t.rows)
    head = (["model"] if grouped else []) + t.head
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    last = None
    for r in t.rows:
        cells = [cell(c.text) for c in r.cells]
        if grouped:
            cells = [cell(r.group or "") if r.group != last else "", *cells]
            last = r.group
        lines.append("| " + " | ".join(cells) + " |")
    out = "\n".join(lines)
    if t.notes:
        out += "\n\n" + "\n\n".join(t.notes)
    return out


def markdown_report(
    *,
    title: str = "privet audit",
    zoo: Sequence[Any] = (),
    learners: Sequence[Any] = (),
    mias: Mapping[str, Any] | None = None,
    learner_zoo: Sequence[Any] = (),
    notes: str = "",
) -> str:
    """The markdown summary: zoos, learners (claimed | proven | measured), MIA tables."""
    parts = [f"# {title}", ""]
    if any(getattr(a, "internal", False) for a in learners):
        parts += [
            "**INTERNAL: this report contains facts about private data (an audit on its rows, "
            "recorded in its ledger as a non-private release). Do not publish it.**",
            "",
        ]
    if notes:
        parts += [notes, ""]
    if zoo:
        conf = zoo[0].broken.confidence
        parts += [
            "## Mechanism bug zoo",
            "",
            f"Every broken mechanism is tested against its claim at {conf:.1%} confidence; "
            "FAIL means the lower bound refutes the claim. The correct counterpart must PASS.",
            "",
            markdown_table(zoo_table(zoo)),
            "",
        ]
    if learner_zoo:
        parts += [
            "## Learner bug zoo",
            "",
            "Every planted bug is audited in white-box mode against the epsilon its own ledger "
            "proves; caught means the bound exceeds it. The correct twin must pass.",
            "",
            markdown_table(learner_zoo_table(learner_zoo)),
            "",
        ]
    if learners:
        parts += [
            "## Learners: claimed, proven and measured epsilon",
            "",
            "Claimed: the paper's guarantee (or the epsilon a model was trained at). Proven: what "
            "privet's ledger computes from the mechanisms that ran (∞: a release with no DP "
            "guarantee). Measured: the rigorous lower bound (white-box: the likelihood ratio of "
            "the recorded releases; black-box: predictions). Estimate: the pair's epsilon "
            "estimated from the same trainings, with its interval.",
            "",
            markdown_table(learner_table(learners)),
            "",
        ]
        for a in learners:
            parts.append(f"- **{a.title}** on {a.dataset}: {a.summary()}")
            parts += [f"  - {line}" for line in learner_details(a)]
        parts.append("")
    all_mias = {f"{a.learner} on {a.dataset}": a.mia for a in learners if a.mia is not None}
    all_mias.update(mias or {})
    if all_mias:
        parts += ["## Membership inference", "", markdown_table(mia_table(all_mias)), ""]
    return "\n".join(parts)
