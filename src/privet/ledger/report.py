"""Rendering a ledger for people: a rich tree of scopes, charges and claims."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rich.console import Group
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from privet.ledger.composition import best_guarantee
from privet.ledger.guarantee import Guarantee

if TYPE_CHECKING:
    from privet.ledger.records import ChargeRecord
    from privet.ledger.tree import ScopeTree as Ledger

MAX_CHARGES_SHOWN = 12


def _g(g: Guarantee) -> str:
    return str(g)


def _charge_line(rec: ChargeRecord) -> Text:
    line = Text()
    line.append(f"{rec.mechanism}", style="bold")
    line.append(f"  {rec.guarantee}", style="green")
    if rec.sensitivity is not None:
        line.append(f"  Δ={rec.sensitivity:g}")
    who = ": ".join(x for x in (rec.caller, rec.step) if x)
    if who:
        line.append(f"  [{who}]", style="dim")
    if rec.claim is not None:
        c = rec.claim
        line.append(f"  claimed ε={c.epsilon:g}", style="yellow")
        if c.source:
            line.append(f" ({c.source})", style="yellow")
    return line


def render_tree(led: Ledger, *, max_parts: int = 3, max_depth: int | None = None) -> Group:
    """The ledger as a rich renderable: header, scope tree, claims table."""
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
    _render_node(led, led._root_id, tree, max_parts, max_depth)
    parts: list = [header, tree]
    claims = led.claims()
    if claims:
        table = Table(title="Claimed vs proven, per charge", show_lines=False)
        for col in ("scope", "step", "mechanism", "claimed", "proven", "source"):
            table.add_column(col)
        for rec in claims[:50]:
            c = rec.claim
            assert c is not None
            claimed = Guarantee(c.epsilon, c.delta)
            style = "red" if rec.guarantee.epsilon > claimed.epsilon * (1 + 1e-9) else ""
            table.add_row(
                rec.path,
                rec.step,
                rec.mechanism,
                _g(claimed),
                Text(_g(rec.guarantee), style=style),
                c.source,
            )
        if len(claims) > 50:
            table.caption = f"{len(claims) - 50} more charges with claims not shown"
        parts.append(table)
    return Group(*parts)


def _render_node(
    led: Ledger, node_id: int, tree: Tree, max_parts: int, max_depth: int | None, depth: int = 0
) -> None:
    if max_depth is not None and depth >= max_depth:
        below = led._nodes[node_id]
        if below.charges or below.groups:
            tree.add(Text("… deeper scopes not shown", style="dim"))
        return
    node = led._nodes[node_id]
    charges = node.charges
    for cid in charges[:MAX_CHARGES_SHOWN]:
        tree.add(_charge_line(led._charges[cid]))
    if len(charges) > MAX_CHARGES_SHOWN:
        tree.add(Text(f"… {len(charges) - MAX_CHARGES_SHOWN} more charges", style="dim"))
    for gid in node.groups:
        group = led._groups[gid]
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
            _render_node(led, child, tree.add(label), max_parts, max_depth, depth + 1)
            continue
        used = [m for m in group.members if not costs[m].is_zero]
        rule = (
            "max"
            if led.relation.value == "add_remove" or group.stable
            else "replaced record may change part"
        )
        label = Text(
            f"partition into {len(group.members)} parts (parallel, {rule})", style="magenta"
        )
        branch = tree.add(label)
        ranked = sorted(used, key=lambda m: -costs[m].eps)
        for m in ranked[:max_parts]:
            g = best_guarantee(costs[m], led.budget.delta).guarantee
            sub = branch.add(Text(f"{led._nodes[m].label}  cost {g}", style="cyan"))
            _render_node(led, m, sub, max_parts, max_depth, depth + 1)
        hidden = len(ranked) - max_parts
        if hidden > 0:
            branch.add(
                Text(f"… {hidden} more parts, each costing at most the ones shown", style="dim")
            )
        idle = len(group.members) - len(used)
        if idle:
            branch.add(Text(f"{idle} parts with no charge", style="dim"))
