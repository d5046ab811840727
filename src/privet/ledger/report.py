"""Rendering a ledger for people: a rich tree of scopes, charges and claims.

A model's ledger repeats itself: a boosted model charges one partition per tree, each
with the same Gaussian in every leaf. By default (``collapse=True``) the tree shows
each repeated shape once: sibling scope groups with the same structure (the same
kinds of charges, by mechanism, entry, caller and step with its numbers left out)
become one line ("14 partitions like this one"), and so do sibling parts of the same
cost and structure, and consecutive charges of the same kind in one scope. Every
cost shown is the ledger's, never a sum made here; ``collapse=False`` shows every
scope (up to ``max_parts`` parts per partition) and every charge.

Each charge shows the (epsilon, delta) proven for it alone at the budget's delta
(:func:`privet.ledger.per_charge.alone`) next to its noise's own parameters.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from privet.ledger.composition import best_guarantee
from privet.ledger.guarantee import Guarantee
from privet.ledger.per_charge import alone, native_text

if TYPE_CHECKING:
    from privet.ledger.records import ChargeRecord
    from privet.ledger.tree import ScopeTree as Ledger

MAX_CHARGES_SHOWN = 12


def _g(g: Guarantee) -> str:
    return str(g)


def _steps(first: ChargeRecord, last: ChargeRecord) -> str:
    """``split, depth 0 … split, depth 2`` for a run of charges of one kind."""
    return first.step if last.step == first.step else f"{first.step} … {last.step}"


def _charge_line(
    rec: ChargeRecord, delta: float, times: int = 1, last: ChargeRecord | None = None
) -> Text:
    line = Text()
    line.append(f"{rec.mechanism}", style="bold")
    if times > 1:
        line.append(f" ×{times}", style="bold")
    line.append(
        f"  {alone(rec.entry, delta).guarantee}" + (" each" if times > 1 else ""), style="green"
    )
    noise = native_text(rec.entry)
    if noise:
        line.append(f"  ({noise})")
    elif rec.sensitivity is not None:
        line.append(f"  Δ={rec.sensitivity:g}")
    who = ": ".join(x for x in (rec.caller, _steps(rec, last or rec)) if x)
    if who:
        line.append(f"  [{who}]", style="dim")
    if rec.claim is not None:
        c = rec.claim
        line.append(f"  claimed ε={c.epsilon:g}", style="yellow")
        if c.source:
            line.append(f" ({c.source})", style="yellow")
    return line


_NUMBER = re.compile(r"\d+")


def _kind(rec: ChargeRecord) -> tuple[Any, ...]:
    """What makes two charges 'the same kind': everything but their numbers and scope."""
    return (
        rec.mechanism,
        type(rec.entry).__name__,
        rec.entry.to_dict().__repr__(),
        rec.caller,
        _NUMBER.sub("#", rec.step),
        None if rec.claim is None else rec.claim.to_dict().__repr__(),
    )


class _Shapes:
    """The structure of each scope and group (memoised), to find repeated siblings."""

    def __init__(self, led: Ledger) -> None:
        self.led = led
        self.nodes: dict[int, Any] = {}
        self.groups: dict[int, Any] = {}

    def node(self, node_id: int) -> Any:
        if node_id not in self.nodes:
            node = self.led._nodes[node_id]
            charges = tuple(sorted({_kind(self.led._charges[c]) for c in node.charges}))
            groups = tuple(self.group(g) for g in node.groups)
            self.nodes[node_id] = (charges, groups)
        return self.nodes[node_id]

    def group(self, group_id: int) -> Any:
        if group_id not in self.groups:
            g = self.led._groups[group_id]
            members = frozenset(self.node(m) for m in g.members)
            self.groups[group_id] = (g.kind, g.stable, g.rate, g.method, members)
        return self.groups[group_id]


def _runs(items: list[Any], key: Any) -> list[list[Any]]:
    """``items`` cut into runs of consecutive items with the same ``key``."""
    runs: list[list[Any]] = []
    for item in items:
        if runs and key(runs[-1][0]) == key(item):
            runs[-1].append(item)
        else:
            runs.append([item])
    return runs


def render_tree(
    led: Ledger,
    *,
    max_parts: int | None = 3,
    max_depth: int | None = None,
    collapse: bool = True,
) -> Group:
    """The ledger as a rich renderable: header, scope tree, claims table.

    ``max_parts`` costliest parts of each partition are shown (None: all);
    ``max_depth`` cuts the tree below that many nested scopes; ``collapse``
    shows repeated siblings once (module docstring).
    """
    spent = led._bound_all()
    used = led._global_bound().guarantee
    header = Text()
    header.append(f"Ledger for dataset '{led.dataset}'", style="bold")
    header.append(f"  ({led.relation.label} neighbours)\n")
    header.append(f"budget {led.budget}   spent {spent.guarantee}", style="bold")
    header.append(f" [{spent.method} composition]")
    reserved = led.reserved()
    if reserved.epsilon > 0:
        header.append(f"   reserved {reserved}")
    if math.isfinite(led.budget.epsilon):
        left = Guarantee(
            max(0.0, led.budget.epsilon - used.epsilon), max(0.0, led.budget.delta - used.delta)
        )
        header.append(f"   remaining {left}", style="bold green")
    tree = Tree(Text(f"{led.dataset}  cost {spent.guarantee}", style="bold cyan"))
    shapes = _Shapes(led) if collapse else None
    _render_node(led, led._root_id, tree, max_parts, max_depth, shapes)
    parts: list = [header, tree]
    claims = led.claims()
    if claims:
        table = Table(title="Claimed vs proven, per charge", show_lines=False)
        for col in ("scope", "step", "mechanism", "claimed", "proven", "source"):
            table.add_column(col)
        runs = [[rec] for rec in claims]
        if collapse:  # one row per kind of claim, with how many charges carry it
            kinds: dict[Any, list[ChargeRecord]] = {}
            for rec in claims:
                kinds.setdefault(_kind(rec), []).append(rec)
            runs = list(kinds.values())
        for run in runs[:50]:
            rec = run[0]
            c = rec.claim
            assert c is not None
            claimed = Guarantee(c.epsilon, c.delta)
            proven = alone(rec.entry, led.budget.delta).guarantee
            style = "red" if proven.epsilon > claimed.epsilon * (1 + 1e-9) else ""
            table.add_row(
                rec.path + (f" (and {len(run) - 1} more)" if len(run) > 1 else ""),
                _steps(rec, run[-1]),
                rec.mechanism,
                _g(claimed),
                Text(_g(proven), style=style),
                c.source,
            )
        if len(runs) > 50:
            table.caption = f"{len(runs) - 50} more rows not shown"
        elif len(runs) < len(claims):
            table.caption = (
                f"{len(claims)} charges with claims, one row per kind (--all: every charge)"
            )
        parts.append(table)
    return Group(*parts)


def _render_charges(led: Ledger, node: Any, tree: Tree, collapse: bool) -> None:
    records = [led._charges[c] for c in node.charges]
    delta = led.budget.delta
    if collapse:
        runs = _runs(records, _kind)
        for run in runs[:MAX_CHARGES_SHOWN]:
            tree.add(_charge_line(run[0], delta, len(run), run[-1]))
        if len(runs) > MAX_CHARGES_SHOWN:
            tree.add(Text(f"… {len(runs) - MAX_CHARGES_SHOWN} more kinds of charge", style="dim"))
        return
    for rec in records:
        tree.add(_charge_line(rec, delta))


def _render_node(
    led: Ledger,
    node_id: int,
    tree: Tree,
    max_parts: int | None,
    max_depth: int | None,
    shapes: _Shapes | None,
    depth: int = 0,
) -> None:
    if max_depth is not None and depth >= max_depth:
        below = led._nodes[node_id]
        if below.charges or below.groups:
            tree.add(Text("… deeper scopes not shown (--depth)", style="dim"))
        return
    node = led._nodes[node_id]
    _render_charges(led, node, tree, shapes is not None)
    groups = [led._groups[g] for g in node.groups]
    runs = (
        _runs(groups, lambda g: shapes.group(g.id)) if shapes is not None else [[g] for g in groups]
    )
    for run in runs:
        group = max(run, key=lambda g: _group_eps(led, g))
        if len(run) > 1:
            what = "partitions" if group.kind == "partition" else "subsamples"
            sizes = sorted({len(g.members) for g in run})
            size = (
                (
                    f", {sizes[0]} parts each"
                    if len(sizes) == 1
                    else f", {sizes[0]} to {sizes[-1]} parts each"
                )
                if group.kind == "partition"
                else ""
            )
            worst = _group_guarantee(led, group)
            label = Text(
                f"{len(run)} {what} like this one{size}, in sequence, each costing at most "
                f"{worst} (the costliest shown; --all: every one)",
                style="magenta",
            )
            _render_group(led, group, tree.add(label), max_parts, max_depth, shapes, depth)
        else:
            _render_group(led, group, tree, max_parts, max_depth, shapes, depth)


def _group_eps(led: Ledger, group: Any) -> float:
    return max((led._subtree_cost(m).eps for m in group.members), default=0.0)


def _group_guarantee(led: Ledger, group: Any) -> Guarantee:
    """The costliest part of ``group`` (amplified for a subsample), at the budget's delta."""
    cost = max((led._subtree_cost(m) for m in group.members), key=lambda c: c.eps)
    if group.kind == "subsample" and not cost.is_zero:
        cost = led._amplified(cost, group)
    return best_guarantee(cost, led.budget.delta).guarantee


def _render_group(
    led: Ledger,
    group: Any,
    tree: Tree,
    max_parts: int | None,
    max_depth: int | None,
    shapes: _Shapes | None,
    depth: int,
) -> None:
    costs = {m: led._subtree_cost(m) for m in group.members}
    if group.kind == "subsample":
        (child,) = group.members
        inner = best_guarantee(costs[child], led.budget.delta).guarantee
        amplified = led._amplified(costs[child], group) if not costs[child].is_zero else None
        label = Text(
            f"subsample {group.method} rate {group.rate:g}: inner {inner}", style="magenta"
        )
        if amplified is not None:
            label.append(f" → amplified ε={amplified.eps:.6g}")
        _render_node(led, child, tree.add(label), max_parts, max_depth, shapes, depth + 1)
        return
    used = [m for m in group.members if not costs[m].is_zero]
    rule = (
        "max"
        if led.relation.value == "add_remove" or group.stable
        else "replaced record may change part"
    )
    label = Text(f"partition into {len(group.members)} parts (parallel, {rule})", style="magenta")
    branch = tree.add(label)
    ranked = sorted(used, key=lambda m: -costs[m].eps)
    if shapes is not None:  # parts of the same cost and structure are one line
        runs = _runs(ranked, lambda m: (shapes.node(m), costs[m].v))
        runs = runs if max_parts is None else runs[:max_parts]
    else:
        runs = [[m] for m in (ranked if max_parts is None else ranked[:max_parts])]
    shown = [m for run in runs for m in run]
    for run in runs:
        g = best_guarantee(costs[run[0]], led.budget.delta).guarantee
        names = [led._nodes[m].label for m in run]
        labels = (
            ", ".join(names)
            if len(names) <= 6
            else (f"{', '.join(names[:3])}, … {names[-1]} ({len(names)} parts)")
        )
        each = " each" if len(run) > 1 else ""
        sub = branch.add(Text(f"{labels}  cost {g}{each}", style="cyan"))
        _render_node(led, run[0], sub, max_parts, max_depth, shapes, depth + 1)
    hidden = len(ranked) - len(shown)
    if hidden > 0:
        branch.add(Text(f"… {hidden} more parts, each costing at most the ones shown", style="dim"))
    idle = len(group.members) - len(used)
    if idle:
        branch.add(Text(f"{idle} parts with no charge", style="dim"))
